"""A run's metrics with no steady rate (`steady_env_steps_per_s: null`): the summary leaves the
run out of its configuration's values, and the report drew the per-repeat figure from two
repeats and one value, ending in matplotlib's `ValueError: x and y must have same first
dimension` (exit 1, naming no file)."""

import json
import shutil
from pathlib import Path

from cli_runs import REPO, SET, one_line, sacscale

RUN = "shared_r1_n1_pool7"


def _edit(path: Path, edit) -> None:
    record = json.loads(path.read_text())
    edit(record)
    path.write_text(json.dumps(record, indent=1))


def test_a_run_without_a_steady_rate_is_refused_naming_its_metrics_file(tmp_path):
    root = tmp_path / "results" / SET
    shutil.copytree(REPO / "results" / SET, root)
    _edit(root / "metrics" / f"{RUN}.json", lambda m: m.update(steady_env_steps_per_s=None))
    # as aggregate summarises it: the run's rate left out of its configuration's values
    _edit(root / "summary.json", lambda s: s["configs"]["n1_pool7"].update(values=[17987.49243337192]))
    done = sacscale("report", "--run-set", f"results/{SET}", "--output-dir", tmp_path / "rep", cwd=tmp_path)
    one_line(done, f"sacscale report: error: results/{SET}/metrics/{RUN}.json: steady_env_steps_per_s is null: "
                   "the run has no steady rate to report (analyze-run gives one for every run it can read)")
