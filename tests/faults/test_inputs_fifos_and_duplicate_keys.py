"""Bad input (docs/faults.md row 21): a FIFO where a
checkpoint or an evidence root goes is named as what it is (not "no such file"), JSON
with a key given twice is refused (a reader of the file would see one value, the command
another), and an evaluation of another shape is named instead of a KeyError."""

import json
import os

import pytest

from one_line_cli import run


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("command", ["evaluate", "render"])
def test_a_fifo_as_the_checkpoint_is_named_not_a_plain_file(capsys, tmp_path, fifo, command):
    out = tmp_path / ("e.json" if command == "evaluate" else "v.webp")
    code, err = run(capsys, command, fifo, "--output", out)
    assert code == 2
    assert err == f"sacscale {command}: error: {fifo}: not a plain file (a FIFO), not a checkpoint"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo"]


def test_a_fifo_as_a_runs_checkpoint_is_named_too(capsys, tmp_path):
    (tmp_path / "run" / "checkpoints").mkdir(parents=True)
    os.mkfifo(tmp_path / "run" / "checkpoints" / "final.pt")
    code, err = run(capsys, "evaluate", tmp_path / "run", "--output", tmp_path / "e.json")
    assert code == 2 and err.endswith("final.pt: not a plain file (a FIFO), not a checkpoint"), err


def test_a_missing_checkpoint_is_still_no_such_file(capsys, tmp_path):
    code, err = run(capsys, "evaluate", tmp_path / "nope.pt", "--output", tmp_path / "e.json")
    assert code == 2 and err.endswith("nope.pt: no such checkpoint file"), err


@pytest.mark.parametrize("what, make, says", [
    ("fifo", lambda p: os.mkfifo(p), "evidence root is not a directory (FIFO)"),
    ("file", lambda p: p.write_text("x"), "evidence root is not a directory (a regular file)"),
    ("missing", lambda p: None, "evidence root is missing"),
    ("link", lambda p: p.symlink_to(p.parent), "evidence root is a symbolic link"),
])
def test_manifest_names_what_its_root_is(capsys, tmp_path, what, make, says):
    root = tmp_path / "root"
    make(root)
    code, err = run(capsys, "manifest", root)
    assert code == 1 and err.startswith(f"sacscale manifest: error: {root}: {says}"), err


@pytest.mark.parametrize("what, make", [("fifo", os.mkfifo), ("missing", lambda p: None)])
def test_analyze_run_names_what_its_run_directory_is(capsys, tmp_path, what, make):
    make(tmp_path / "run")
    code, err = run(capsys, "analyze-run", tmp_path / "run", "--output", tmp_path / "m.json")
    word = "not a directory" if what == "fifo" else "missing"
    assert code == 1 and err == f"sacscale analyze-run: error: {tmp_path / 'run'}: not a run directory ({word})"
    assert not (tmp_path / "m.json").exists()


def test_aggregate_refuses_a_metrics_file_with_a_key_given_twice(capsys, tmp_path):
    metrics = tmp_path / "m.json"
    metrics.write_text('{"run": "r1_a", "config": "a", "steady_env_steps_per_s": 1000, '
                       '"steady_env_steps_per_s": 9999}')
    code, err = run(capsys, "aggregate", metrics, "--csv", tmp_path / "s.csv", "--json", tmp_path / "s.json")
    assert code == 2
    assert err.startswith(f"sacscale aggregate: error: metrics file {metrics}: duplicate key "
                          "'steady_env_steps_per_s'"), err
    assert not (tmp_path / "s.csv").exists() and not (tmp_path / "s.json").exists()


@pytest.mark.parametrize("content, says", [
    ({"a": 1}, "its 'overall' is missing"),
    ({"overall": []}, "its 'overall' is list, not an object"),
    ({"overall": {"fall_rate": "x"}}, "its 'overall.fall_rate' is str"),
])
def test_render_best_names_an_evaluation_of_another_shape(capsys, tmp_path, content, says):
    evaluation = tmp_path / "r1.json"
    evaluation.write_text(json.dumps(content))
    (tmp_path / "runs").mkdir()  # the runs and the outputs apart from the evaluation: its subject is the shape
    code, err = run(capsys, "render-best", "--evaluations", evaluation, "--runs-dir", tmp_path / "runs", "--output",
                    tmp_path / "out" / "v.webp", "--record", tmp_path / "out" / "best.json")
    assert code == 2
    assert err.startswith(f"sacscale render-best: error: evaluation {evaluation}: not `sacscale evaluate`'s "
                          f"output ({says}"), err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r1.json", "runs"]
