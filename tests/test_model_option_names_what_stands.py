"""Every command that takes a model file (`--model`, `--from-mjb`) names a bad one in one
line, exit 2, before anything runs: env-bench, solver-study and probe went straight to
loading it (`ValueError: XML parse error ... (unexpected; ...)`, exit 1, or each
collector's traceback), and a device or a folder was called "no such file"."""

import pytest

from cli_runs import one_line, sacscale

NOT_MJCF = "not a loadable MuJoCo model (MJCF) (truncated or another format?)"


@pytest.fixture
def text_file(tmp_path):
    path = tmp_path / "hostname"
    path.write_text("somehost\n")
    return path


@pytest.mark.parametrize("command", [
    ["env-bench", "--num-envs", "2", "--steps", "4", "--threads", "1"],
    ["solver-study", "--num-envs", "2", "--steps", "4"],
    ["probe", "trainer", "--devices", "cpu,cpu"],
])
def test_a_file_that_is_no_model_is_named_before_the_measurement(tmp_path, text_file, command):
    out = tmp_path / "out.json"
    one_line(sacscale(*command, "--model", text_file, "--output", out),
             f"sacscale {command[0]}: error: --model {text_file}: {NOT_MJCF}")
    assert not out.exists()


@pytest.mark.parametrize("command", [
    ["env-bench", "--num-envs", "2", "--steps", "4", "--threads", "1"],
    ["solver-study", "--num-envs", "2", "--steps", "4"],
])
def test_a_folder_given_as_the_model_is_called_a_folder(tmp_path, command):
    out = tmp_path / "out.json"
    one_line(sacscale(*command, "--model", tmp_path, "--output", out),
             f"sacscale {command[0]}: error: --model {tmp_path}: not a plain file (a folder), not a model file")
    assert not out.exists()


def test_prepare_model_calls_a_device_a_device(tmp_path):
    one_line(sacscale("prepare-model", "--output-dir", tmp_path / "pm", "--from-mjb", "/dev/zero"),
             "--from-mjb /dev/zero: not a plain file (a character device), not a model file")
    one_line(sacscale("prepare-model", "--output-dir", tmp_path / "pm", "--from-mjb", tmp_path),
             f"--from-mjb {tmp_path}: not a plain file (a folder), not a model file")
    assert not (tmp_path / "pm").exists()


def test_train_calls_a_folder_given_as_the_model_a_folder(tmp_path):
    one_line(sacscale("train", "--devices", "cpu", "--model", tmp_path, "--log-dir", tmp_path / "run"),
             f"--model {tmp_path}: not a plain file (a folder), not a model file")
    assert not (tmp_path / "run").exists()
