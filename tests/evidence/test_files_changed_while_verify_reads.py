"""A file renamed over one of the set's after verify hashed it (another user's watcher, say)
was what every later check read: the hash vouched for bytes the metrics never saw, and a
forged set passed. Each file's identity is now taken before the first read and again after
the last; one that changed is named and the verdict fails."""

import json
import os
import shutil

import pytest
from set_copies import copy_committed_set, current_copy

from sacscale.analysis.metrics import analyze_run
from sacscale.cli import main
from sacscale.evidence import manifest
from sacscale.evidence import verify as verify_module
from sacscale.evidence.verify import verify
from synthetic_runs import simple_run

AGAIN = "verify again when nothing writes the set"


@pytest.fixture
def forged_set(tmp_path):
    """A set whose p_r1_n1 metrics were written from a forged event file (125 env steps/s)
    while its manifest hashes the run's own (100/s): at rest it fails. Returns (root, the
    run's event file, the forged copy of the same size)."""
    root = tmp_path / "results" / "S"
    for config, rate in (("n1", 100.0), ("n2", 190.0)):
        run = simple_run(root / "runs" / f"p_r1_{config}", config, 1, rate)
        (root / "metrics").mkdir(parents=True, exist_ok=True)
        (root / "metrics" / f"{run.name}.json").write_text(json.dumps(analyze_run(run)))
    forged_run = simple_run(tmp_path / "forged" / "p_r1_n1", "n1", 1, 125.0)
    (root / "metrics" / "p_r1_n1.json").write_text(json.dumps(analyze_run(forged_run)))
    events = next((root / "runs" / "p_r1_n1" / "tb" / "rank0").glob("events.out.tfevents.*"))
    forged = next((forged_run / "tb" / "rank0").glob("events.out.tfevents.*"))
    shutil.copy(root / "runs" / "p_r1_n1" / "run.json", forged_run / "run.json")
    assert forged.stat().st_size == events.stat().st_size and forged.read_bytes() != events.read_bytes()
    manifest.write(root)
    assert not verify(root).ok  # at rest, the metrics are not the events'
    return root, events, forged


def _swapping_in(monkeypatch, check: str, events, forged, swap_back: bool = False) -> None:
    """verify's `check` made to rename the forged copy over the event file first (and, with
    swap_back, the original back through a hard link once the check has read it)."""
    original = getattr(verify_module, check)

    def swapped(*args, **kwargs):
        kept = events.with_name("kept")
        os.link(events, kept)
        os.replace(shutil.copy(forged, events.with_name("forged.tmp")), events)
        out = original(*args, **kwargs)
        if swap_back:
            os.replace(kept, events)
        else:
            kept.unlink()
        return out

    monkeypatch.setattr(verify_module, check, swapped)


def _line(root, events) -> str:
    return f"changed while verify read it: {events.relative_to(root).as_posix()} ({AGAIN})"


def test_a_file_swapped_in_after_the_hash_fails_verify(forged_set, monkeypatch, capsys, tmp_path):
    root, events, forged = forged_set
    _swapping_in(monkeypatch, "check_metrics", events, forged)
    output = tmp_path / "v.json"
    assert main(["verify", str(root), "--output", str(output)]) == 1
    assert f"  {_line(root, events)}" in capsys.readouterr().err.splitlines()
    written = json.loads(output.read_text())
    assert written["ok"] is False
    assert written["changed"] == [f"{events.relative_to(root).as_posix()} (changed while verify read it; {AGAIN})"]


def test_a_file_swapped_back_through_a_hard_link_fails_verify(forged_set, monkeypatch):
    root, events, forged = forged_set
    _swapping_in(monkeypatch, "check_metrics", events, forged, swap_back=True)
    result = verify(root)
    assert not result.ok and result.changed_while_read == [events.relative_to(root).as_posix()]
    assert _line(root, events) in result.problems()


def test_no_metrics_names_a_file_swapped_after_the_hash(forged_set, monkeypatch):
    root, events, forged = forged_set
    _swapping_in(monkeypatch, "check_coverage", events, forged)
    result = verify(root, recompute=False)
    assert result.problems() == [_line(root, events)]


def test_a_report_file_swapped_while_verify_reads_fails_verify(tmp_path, monkeypatch):
    root = copy_committed_set(tmp_path, "h200x1_shared_short")
    page = root.parent.parent / "reports" / root.name / "report.md"
    original = verify_module.check_report

    def swapped(*args, **kwargs):  # the same bytes, another file: no check of the page's words sees it
        os.replace(shutil.copy(page, page.with_name("copy.tmp")), page)
        return original(*args, **kwargs)

    monkeypatch.setattr(verify_module, "check_report", swapped)
    result = verify(root)
    assert result.problems() == [f"changed while verify read it: reports/{root.name}/report.md ({AGAIN})"]


def test_a_set_nothing_writes_verifies(forged_set):
    root, events, forged = forged_set
    shutil.copy(forged, events)  # the forgery at rest, hashed: the set is whole again
    manifest.write(root)
    assert verify(root).ok


def test_the_report_being_written_beside_the_pipelines_own_verification_is_not_named(tmp_path, monkeypatch):
    """The pipeline's own verification (the report pending) reads nothing of reports/S, while
    the pipeline's render of the best run writes its video there: named as changed, that
    failed every pipeline with the video on whenever the two overlapped."""
    root = current_copy(tmp_path, "h200x1_shared_short")
    video = root.parent.parent / "reports" / root.name / "figures" / "best_run.json"
    original = verify_module.check_records

    def rendering(*args, **kwargs):  # render-best writes its record meanwhile
        video.write_text("{}")
        return original(*args, **kwargs)

    monkeypatch.setattr(verify_module, "check_records", rendering)
    assert verify(root, report_pending=True).changed_while_read == []
    assert verify(root).changed_while_read == [f"reports/{root.name}/figures/best_run.json"]
