"""The not-UTF-8 rule by kind of value: every value whose bytes were not UTF-8 was refused
with "the records are UTF-8; rename it", also a file name no record holds (verify's --output
and --manifest, which worked before) and a value that is no name (--env, --devices, a
number), where renaming is no cure. Under an ASCII locale a name's `é` was shown as the code
point `\\xe9`, not as its bytes `\\xc3\\xa9` as the shell writes them."""

import os
import shutil
import subprocess
import sys

import pytest

from tests.evidence.set_copies import copy_committed_set

VALUE = "not valid UTF-8 text (undecodable bytes): type it in UTF-8"
LOCALES = {"C.UTF-8": {"LC_ALL": "C.UTF-8", "PYTHONUTF8": "0"},
           "C": {"LC_ALL": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"}}


def sacscale(*argv, cwd=None, locale="C.UTF-8") -> tuple[int, list[str]]:
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", *argv], cwd=cwd, capture_output=True, timeout=300,
                          env={**os.environ, **LOCALES[locale]})
    return done.returncode, done.stderr.decode("utf-8", "backslashreplace").strip().splitlines()


@pytest.mark.parametrize("locale", LOCALES)
def test_verify_writes_its_output_and_reads_its_manifest_at_names_not_utf8(tmp_path, locale):
    root = copy_committed_set(tmp_path / "set", "h200x1_shared_short")
    manifest = os.fsencode(tmp_path) + b"/\xffM.sha256"
    shutil.copyfile(root / "MANIFEST.sha256", manifest)
    output = os.fsencode(tmp_path) + b"/\xfe\xff.json"
    rc, _ = sacscale("verify", root, "--manifest", manifest, "--output", output, locale=locale)
    assert rc == 0 and os.path.exists(output)


def test_a_missing_manifest_not_utf8_is_named_as_the_shell_writes_it(tmp_path):
    root = copy_committed_set(tmp_path / "set", "h200x1_shared_short")
    assert sacscale("verify", root, "--manifest", os.fsencode(tmp_path) + b"/\xffM.sha256") == (2, [
        f"sacscale verify: error: --manifest {tmp_path}/\\xffM.sha256: no such file; name a set's MANIFEST.sha256 "
        "(sacscale manifest writes one)"])


@pytest.mark.parametrize("locale", LOCALES)
def test_values_that_are_not_names_are_typed_again_not_renamed(tmp_path, locale):
    assert sacscale("record-run", "--run-dir", tmp_path / "run", "--work-dir", tmp_path / ".p", "--env", b"X=\xff",
                    "--", "true", locale=locale) == (2, [f"sacscale record-run: error: --env 'X=\\xff' is {VALUE}"])
    assert sacscale("train", "--devices", b"cpu\xff", "--log-dir", tmp_path / "t", locale=locale) == (2, [
        f"sacscale train: error: --devices 'cpu\\xff' is {VALUE}"])
    assert sacscale("train", "--iterations", b"\xff", "--log-dir", tmp_path / "t", locale=locale) == (2, [
        f"sacscale train: error: --iterations '\\xff' is {VALUE}"])
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("locale", LOCALES)
def test_each_value_of_an_option_of_several_is_judged(tmp_path, locale):
    assert sacscale("learner-bench", "--modes", "eager", b"gr\xffaph", "--out", tmp_path / "b.json",
                    locale=locale) == (2, [f"sacscale learner-bench: error: --modes 'gr\\xffaph' is {VALUE}"])
    assert os.listdir(tmp_path) == []


def test_a_non_ascii_name_under_an_ascii_locale_is_shown_as_its_bytes(tmp_path):
    rc, lines = sacscale("verify", tmp_path / "sp ace é" / "x", locale="C")
    assert rc == 2 and lines[0].startswith(f"sacscale verify: error: root '{tmp_path}/sp ace \\xc3\\xa9/x': "), lines
