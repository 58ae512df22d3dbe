"""`train` under a C locale with UTF-8 mode and locale coercion off (the file-system encoding
is then ASCII) and a non-ASCII path. Before: the run failed (rc 1) with only `'utf-8' codec
can't encode characters ...: surrogates not allowed`, naming no path nor cause, and left a
failed train_meta.json. Now the path, the encoding and the cure are named as a usage error
before anything is made."""

import os
import subprocess
import sys

import pytest

ASCII_LOCALE = {"LC_ALL": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"}
CURE = ("the file-system encoding is ascii here (a C/POSIX locale, not coerced, with UTF-8 mode off), so "
        "this non-ASCII name cannot be read or written as UTF-8 (the records, MuJoCo); set PYTHONUTF8=1 or a UTF-8 "
        "locale (e.g. LC_ALL=C.UTF-8)")


def train(*argv):
    return subprocess.run([sys.executable, "-m", "sacscale.cli", "train", "--devices", "cpu", "--num-envs", "16",
                           "--batch-size", "128", "--iterations", "12", *map(os.fsencode, argv)],
                          capture_output=True, env={**os.environ, **ASCII_LOCALE}, timeout=300)


@pytest.mark.parametrize("option", ["--log-dir", "--model"])
def test_a_non_ascii_path_is_named_with_the_locale_before_anything_is_made(tmp_path, option):
    folder = tmp_path / "dé"
    folder.mkdir()
    log_dir = folder / "t2" if option == "--log-dir" else tmp_path / "run"
    argv = ["--log-dir", log_dir] + (["--model", folder / "m.mjb"] if option == "--model" else [])
    done = train(*argv)
    lines = done.stderr.decode("ascii", "backslashreplace").strip().splitlines()
    named = folder / "t2" if option == "--log-dir" else folder / "m.mjb"
    shown = repr(str(named)).replace("é", "\\xc3\\xa9")  # a name shown as its bytes, as the shell writes them
    assert done.returncode == 2 and lines == [f"sacscale train: error: {option} {shown}: {CURE}"], done.stderr
    assert not log_dir.exists()
