"""Any command given a non-ASCII path under a C locale with UTF-8 mode and locale coercion
off (the file-system encoding is then ASCII). Before: `verify` of a legitimate set there
failed (rc 1) under wrong causes, "a path that is not UTF-8 ...; rename the folder" and
MuJoCo's `TypeError: from_binary_path()`. Now the argument, the encoding and the cure are
named as a usage error, before the command reads anything."""

import os
import subprocess
import sys

import pytest

from tests.evidence.set_copies import copy_committed_set

ASCII_LOCALE = {"LC_ALL": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"}
CURE = ("the file-system encoding is ascii here (a C/POSIX locale, not coerced, with UTF-8 mode off), so this "
        "non-ASCII name cannot be read or written as UTF-8 (the records, MuJoCo); set PYTHONUTF8=1 or a UTF-8 "
        "locale (e.g. LC_ALL=C.UTF-8)")


def sacscale(*argv, utf8=False):
    env = {**os.environ, **({} if utf8 else ASCII_LOCALE)}
    return subprocess.run([sys.executable, "-m", "sacscale.cli", *map(os.fsencode, argv)], capture_output=True,
                          env=env, timeout=600)


def shown(path) -> str:
    return repr(str(path)).replace("é", "\\xc3\\xa9")  # a name shown as its bytes, as the shell writes them


@pytest.fixture
def placed_set(tmp_path):
    """A committed set copied into a folder whose name is not ASCII."""
    root = copy_committed_set(tmp_path / "dé", "h200x1_shared_short")
    return root


def test_verify_of_a_set_at_a_non_ascii_path_names_the_locale(placed_set):
    done = sacscale("verify", placed_set)
    lines = done.stderr.decode("ascii", "backslashreplace").strip().splitlines()
    assert done.returncode == 2 and lines == [f"sacscale verify: error: root {shown(placed_set)}: {CURE}"], \
        done.stderr


def test_an_option_naming_a_non_ascii_file_is_named_too(placed_set, tmp_path):
    output = placed_set.parent.parent / "v.json"
    done = sacscale("manifest", tmp_path, "--json", output)
    lines = done.stderr.decode("ascii", "backslashreplace").strip().splitlines()
    assert done.returncode == 2 and lines == [f"sacscale manifest: error: --json {shown(output)}: {CURE}"], \
        done.stderr
    assert not output.exists()


def test_under_a_utf8_locale_the_same_name_is_judged_as_any_other(tmp_path):
    done = sacscale("verify", tmp_path / "dé" / "missing", utf8=True)
    assert done.returncode != 0 and b"file-system encoding" not in done.stderr, done.stderr
