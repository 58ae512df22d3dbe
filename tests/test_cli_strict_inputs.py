"""Command-line input. A metrics file with a lone surrogate
in a name passed `aggregate`'s reader and ended its CSV in a UnicodeEncodeError (exit 1 as
unexpected); `--meta` was read loosely (a key given twice kept the last value, NaN became
null, a lone surrogate reached summary.json); the report's records of another shape (an
evaluation without its `overall`, a list) ended in a KeyError or TypeError naming no file;
`verify --redraw-figures --no-metrics` silently drew nothing."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from cli_runs import REPO, SET, edited_metrics, sacscale
from cli_runs import one_line as _one_line


def _metrics(tmp_path, run):
    return edited_metrics(tmp_path, lambda record: {**record, "run": run})


def test_a_metrics_file_with_a_lone_surrogate_is_named_and_nothing_is_written(tmp_path):
    metrics = _metrics(tmp_path, "r1\udcff")
    done = sacscale("aggregate", metrics, "--csv", tmp_path / "s.csv", "--json", tmp_path / "s.json")
    _one_line(done, f"metrics file {metrics}: a string with a lone surrogate (\\udcff)")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.json"]


@pytest.mark.parametrize("meta, says", [
    ('{"a": 1, "a": 2}', "--meta: duplicate key 'a'"),
    ('{"a": NaN}', "--meta: holds NaN, which JSON does not define"),
    ('{"a": "\\udcff"}', "--meta: a string with a lone surrogate"),
])
def test_meta_is_read_as_strictly_as_a_record(tmp_path, meta, says):
    metrics = _metrics(tmp_path, "r1")
    done = sacscale("aggregate", metrics, "--csv", tmp_path / "s.csv", "--json", tmp_path / "s.json", "--meta", meta)
    _one_line(done, says)
    assert not (tmp_path / "s.json").exists()


@pytest.mark.parametrize("edit, says", [
    (lambda d: {k: v for k, v in d.items() if k != "overall"}, "(its 'overall' is missing)"),
    (lambda d: {**d, "overall": [1]}, "(its 'overall' is list, not an object)"),
    (lambda d: [d], "(a JSON list, not an object)"),
])
def test_an_evaluation_of_another_shape_is_named_and_no_page_is_written(tmp_path, edit, says):
    root = tmp_path / "results" / SET
    shutil.copytree(REPO / "results" / SET, root)
    evaluation = root / "eval" / "shared_r1_n1_pool7.json"
    evaluation.write_text(json.dumps(edit(json.loads(evaluation.read_text()))))
    done = sacscale("report", "--run-set", f"results/{SET}", cwd=tmp_path)
    _one_line(done, f"sacscale report: error: results/{SET}/eval/shared_r1_n1_pool7.json: not a record this "
                    f"pipeline wrote {says}")
    assert not (tmp_path / "reports" / SET / "report.md").exists()


def test_redrawing_figures_without_recomputing_the_metrics_is_refused():
    done = sacscale("verify", REPO / "results" / SET, "--redraw-figures", "--no-metrics")
    _one_line(done, "--redraw-figures draws the figures from the metrics it recomputes, which --no-metrics leaves "
                    "out")


def test_a_mujoco_gl_that_mujoco_refuses_stops_train_before_anything_starts(tmp_path):
    """The collector's traceback, then exit 1, after the job had started."""
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", "train", "--devices", "cpu", "--num-envs", "16",
                           "--iterations", "4", "--log-dir", str(tmp_path / "run")], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "MUJOCO_GL": "nonsense"})
    _one_line(done, "sacscale train: error: MUJOCO_GL='nonsense' is not a value MuJoCo knows")
    assert not (tmp_path / "run").exists()


def test_a_new_file_inside_a_committed_set_is_refused(tmp_path):
    """A committed set's files were protected from being replaced, not from a file added
    beside them (`aggregate --csv results/h200x1/new.csv`), which its verification then
    names as extra."""
    repo = tmp_path / "repo"
    record = repo / "results" / "s" / "summary.json"
    record.parent.mkdir(parents=True)
    record.write_text("{}\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", str(record)], check=True)
    run = REPO / "results" / SET / "runs" / "shared_r1_n1_pool7"
    done = sacscale("analyze-run", run, "--output", "results/s/metrics/new.json", cwd=repo)
    assert done.returncode == 2 and done.stderr.strip().splitlines()[-1] == (  # argparse: its usage, then this
        "sacscale analyze-run: error: argument --output: results/s/metrics/new.json is inside results/s, a committed "
        "run set (git tracks it), whose evidence is not rewritten or added to; write outside it"), done.stderr
    assert not (repo / "results" / "s" / "metrics").exists()
    assert sacscale("analyze-run", run, "--output", "results/t/new.json", cwd=repo).returncode == 0  # a new set


def test_keep_best_of_an_evaluation_of_another_shape_is_named(tmp_path):
    root = tmp_path / "results" / SET
    shutil.copytree(REPO / "results" / SET, root)
    evaluation = tmp_path / "e.json"
    evaluation.write_text(json.dumps({"run": "shared_r1_n1_pool7"}))
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    done = sacscale("manifest", root, "--scope", "--keep-best", evaluation, "--left-out-dir", tmp_path / "out")
    _one_line(done, f"--keep-best: evaluation {evaluation}: not `sacscale evaluate`'s output (its 'overall' is "
                    "missing)")
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before


def test_a_pair_naming_no_configuration_of_the_metrics_is_bad_input(tmp_path):
    """It was exit 1, as a failure of the command, not of its input."""
    done = sacscale("aggregate", _metrics(tmp_path, "r1"), "--csv", tmp_path / "s.csv", "--json", tmp_path / "s.json",
                    "--pair", "nope:n1_pool7")
    _one_line(done, "sacscale aggregate: error: --pair 'nope:n1_pool7': 'nope' is no configuration of the metrics "
                    "given (theirs: n1_pool7)")
    assert not (tmp_path / "s.csv").exists()
