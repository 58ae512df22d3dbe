"""A path whose bytes are not UTF-8 (`$'/tmp/\\xff\\xfe'`) under a UTF-8 file-system encoding
(a UTF-8 locale, or UTF-8 mode). It was refused with the ASCII locale's cause, "(a C/POSIX
locale, not coerced, with UTF-8 mode off)", and a cure already in force (`set PYTHONUTF8=1`):
a user following it got the same line. Now the name gets its own cause and cure; the ASCII
locale's stays where the encoding is not UTF-8 (tests/test_cli_paths_under_an_ascii_locale.py)."""

import os
import subprocess
import sys

import pytest

NOT_UTF8 = "not valid UTF-8 (undecodable bytes in the name): the records are UTF-8; rename it"
UTF8_ENCODINGS = {
    "a UTF-8 locale": {"LC_ALL": "C.UTF-8", "PYTHONUTF8": "0"},
    "UTF-8 mode": {"LC_ALL": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "1"},
}
TRAIN = ("train", "--devices", "cpu", "--num-envs", "4", "--batch-size", "4", "--iterations", "2")


def train(log_dir: bytes, settings: dict, cwd=None) -> tuple[int, list[str]]:
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", *TRAIN, "--log-dir", log_dir], cwd=cwd,
                          capture_output=True, env={**os.environ, **settings}, timeout=600)
    return done.returncode, done.stderr.decode("utf-8", "backslashreplace").strip().splitlines()


@pytest.mark.parametrize("encoding", UTF8_ENCODINGS)
def test_a_log_dir_that_is_not_utf8_is_named_as_such(tmp_path, encoding):
    log_dir = os.fsencode(tmp_path) + b"/\xff\xfe2"
    assert train(log_dir, UTF8_ENCODINGS[encoding]) == (2, [
        f"sacscale train: error: --log-dir '{tmp_path}/\\xff\\xfe2' is {NOT_UTF8}"])
    assert not os.path.lexists(log_dir)


def test_a_working_folder_that_is_not_utf8_is_named_with_the_path(tmp_path):
    folder = os.fsencode(tmp_path) + b"/\xff"
    os.mkdir(folder)
    assert train(b"run", UTF8_ENCODINGS["a UTF-8 locale"], cwd=folder) == (2, [
        f"sacscale train: error: --log-dir 'run' is '{tmp_path}/\\xff/run' (joined to the working folder), "
        f"{NOT_UTF8}"])
    assert os.listdir(folder) == []


def sacscale(argv: list, settings: dict) -> tuple[int, list[str]]:
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", *argv], capture_output=True,
                          env={**os.environ, **settings}, timeout=600)
    return done.returncode, done.stderr.decode("utf-8", "backslashreplace").strip().splitlines()


@pytest.mark.parametrize("encoding", UTF8_ENCODINGS)
def test_a_prepare_model_output_dir_not_utf8_is_refused_before_the_model_is_saved(tmp_path, encoding):
    """MuJoCo loads the saved model back from the folder: it refused the name with a TypeError
    (exit 1, unexpected) and left the folder holding the model."""
    out = os.fsencode(tmp_path) + b"/o\xff"
    assert sacscale(["prepare-model", "--output-dir", out, "--num-envs", "2", "--steps", "2"],
                    UTF8_ENCODINGS[encoding]) == (2, [
        f"sacscale prepare-model: error: --output-dir '{tmp_path}/o\\xff' is {NOT_UTF8}"])
    assert not os.path.lexists(out)


def test_a_g1_assets_setting_not_utf8_is_named_with_the_cure(tmp_path):
    from sacscale.task.g1_model import asset_dir

    copy = os.fsencode(tmp_path) + b"/g\xff\xfe"
    os.symlink(asset_dir(), copy)
    settings = {**UTF8_ENCODINGS["a UTF-8 locale"], "SACSCALE_G1_ASSETS": copy}
    assert sacscale(["prepare-model", "--output-dir", tmp_path / "pm", "--num-envs", "2", "--steps", "2"],
                    settings) == (2, [
        f"sacscale prepare-model: error: $SACSCALE_G1_ASSETS '{tmp_path}/g\\xff\\xfe' is {NOT_UTF8}"])
    assert not (tmp_path / "pm").exists()


def test_a_model_option_not_utf8_is_named_with_the_cure(tmp_path):
    """env-bench, solver-study, evaluate, render, probe: sacscale.checks.check_model."""
    model = os.fsencode(tmp_path) + b"/m\xff.mjb"
    with open(model, "wb") as fh:
        fh.write(b"\0" * 64)
    assert sacscale(["env-bench", "--model", model], UTF8_ENCODINGS["a UTF-8 locale"]) == (2, [
        f"sacscale env-bench: error: --model '{tmp_path}/m\\xff.mjb' is {NOT_UTF8}"])
