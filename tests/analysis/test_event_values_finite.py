"""A non-finite value of a tag the metrics read, which our trainer never logs non-finite
(it leaves a NaN unwritten and stops on a non-finite loss), is refused where the run's
events are read: a last `Episode/return` of +inf gave `final_episode_return: null`, which
the page showed as n/a with a footnote saying no episode had ended."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from event_times import event_file, revalued

RUN = Path(__file__).resolve().parents[2] / "results" / "h200x1_shared_short" / "runs" / "shared_r1_n1_pool7"
WHY = "(the trainer never logs this tag non-finite: it leaves a NaN unwritten and stops on a non-finite loss)"


def analyze(run: Path, output: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sacscale", "analyze-run", str(run), "--output", str(output)],
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize(("tag", "bad"), [("Episode/return", float("inf")), ("Episode/return", float("nan")),
                                          ("Perf/rank_fps", float("-inf"))])
def test_a_non_finite_value_of_a_tag_the_metrics_read_is_refused_naming_file_step_and_tag(tmp_path, tag, bad):
    run = tmp_path / RUN.name
    shutil.copytree(RUN, run)
    path = event_file(run)
    revalued(path, tag, lambda step, value: bad if step == 300 else value)
    done = analyze(run, tmp_path / "m.json")
    # a run it cannot analyse is exit 1, as for every other event file it refuses
    expected = f"sacscale analyze-run: error: {path}: step 300 {tag}: value {bad} {WHY}\n"
    assert (done.returncode, done.stderr) == (1, expected)
    assert not (tmp_path / "m.json").exists()


def test_a_non_finite_value_of_a_tag_the_metrics_do_not_read_is_left_to_the_other_checks(tmp_path):
    run = tmp_path / RUN.name
    shutil.copytree(RUN, run)
    revalued(event_file(run), "Loss/critic", lambda step, value: float("inf") if step == 300 else value)
    done = analyze(run, tmp_path / "m.json")
    assert done.returncode == 0, done.stderr
