"""Recorded values the report showed as written: counts of
manifest.json and verify.json, the summary's pairing sentence and its numbers, where a
record holds a string with markup (`<img onerror>` ran in report.html). A summary whose
numbers are not numbers is refused whole, naming the field."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SET = "h200x1_shared_short"
MARKUP = "<img src=x onerror=alert(1)>"


def _edit(path: Path, change) -> None:
    record = json.loads(path.read_text())
    change(record)
    path.write_text(json.dumps(record))


def test_recorded_counts_and_sentences_with_markup_are_shown_as_text(tmp_path):
    root = tmp_path / "results" / SET
    shutil.copytree(REPO / "results" / SET, root)
    _edit(root / "manifest.json", lambda r: r.update(files=MARKUP, bytes=MARKUP))
    _edit(root / "verify.json", lambda r: r.update(files_checked=MARKUP, runs_checked="[x](javascript:alert(1))"))

    _edit(root / "summary.json", lambda r: r.update(pairing=MARKUP))
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", "report", "--run-set", f"results/{SET}"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    for page in ("report.md", "report.html"):
        text = (tmp_path / "reports" / SET / page).read_text()
        assert "<img src=x" not in text and 'href="javascript' not in text, page
        assert text.count("&lt;img src=x onerror=alert(1)&gt;") >= 4, page


@pytest.mark.parametrize("change, field", [
    (lambda r: next(iter(r["configs"].values())).update(mean=MARKUP), "configs['n1_pool7'].mean"),
    (lambda r: r["comparisons"][0].update(ci_repeats="5"), "comparisons[0].ci_repeats"),
    (lambda r: next(iter(r["configs"].values())).update(world_size=2.0), "configs['n1_pool7'].world_size"),
    (lambda r: r["comparisons"][0].update(ratio_ci95=[1.0, "2"]), "comparisons[0].ratio_ci95[1]"),
    (lambda r: next(iter(r["configs"].values()))["time_to_quality"]["episode_length"].update(reached="1"),
     "configs['n1_pool7'].time_to_quality['episode_length'].reached"),
])
def test_a_summary_whose_numbers_are_not_numbers_is_named_and_no_page_is_written(tmp_path, change, field):
    root = tmp_path / "results" / SET
    shutil.copytree(REPO / "results" / SET, root)
    _edit(root / "summary.json", change)
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", "report", "--run-set", f"results/{SET}"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    line, = done.stderr.strip().splitlines()
    assert line.startswith(f"sacscale report: error: results/{SET}/summary.json: not a record this pipeline wrote "
                           f"(its {field!r} is "), line
    assert not (tmp_path / "reports" / SET / "report.md").exists()
