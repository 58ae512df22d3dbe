"""Outputs written together, one command at a time. Two `evaluate --output e.json --figure
e.png` at once both exited 0 and could leave one's record beside the other's figure. Now a
command holds the lock of each of its outputs (`.<name>.lock` beside it) while it works and
writes them, and a second one given any of them is refused at once with one line naming the
output and the holder (exit 2), nothing written; the first finishes and removes its locks.
The first is stopped at a named function (evidence/paused_sacscale.py) while the second
runs: no timing decides the order."""

import errno
import json
import os
from pathlib import Path

import pytest

from sacscale.cli import main

from cli_runs import REPO, SET, one_line, sacscale
from paused_runs import finished, started_paused

RESULTS = REPO / "results" / SET
CHECKPOINT = RESULTS / "runs" / "shared_r1_n1_pool7" / "checkpoints" / "final.pt"
MODEL = RESULTS / "model" / "g1_walk_flat.mjb"
METRICS = sorted((RESULTS / "metrics").glob("*.json"))
FAST = ["--envs-per-command", "1", "--seconds", "1.5", "--settle-s", "0.5", "--threads", "1"]


def refusal(option: str, path: Path, pid: int) -> str:
    return (f"error: {option} {path}: another sacscale command is writing this output (pid {pid} holds "
            f"{path.parent}/.{path.name}.lock); nothing was written: run this one once it has finished, or write "
            "it elsewhere")


def test_a_second_evaluate_into_the_same_pair_is_refused(tmp_path):
    out = tmp_path / "out"
    record, figure = out / "e.json", out / "e.png"
    argv = ["evaluate", CHECKPOINT, "--model", MODEL, "--output", record, "--figure", figure]
    first = started_paused(tmp_path, "sacscale.eval.evaluate:evaluate", *argv, *FAST)
    second = sacscale(*argv, "--envs-per-command", "2", "--seconds", "1.5", "--threads", "1")
    one_line(second, refusal("--output", record, first.pid))  # e.json sorts first
    assert sorted(p.name for p in out.iterdir()) == [".e.json.lock", ".e.png.lock"]
    done = finished(tmp_path, first)
    assert done.returncode == 0, done.stderr
    assert json.loads(record.read_text())["protocol"]["envs_per_command"] == 1
    assert sorted(p.name for p in out.iterdir()) == ["e.json", "e.png"]  # the locks gone with the first


def test_a_second_aggregate_sharing_one_output_is_refused(tmp_path):
    """Either output shared is refused: the other's table would stand beside this statistics."""
    csv, summary = tmp_path / "s.csv", tmp_path / "s.json"
    first = started_paused(tmp_path, "sacscale.commands.aggregate:write_together", "aggregate", *METRICS,
                           "--csv", csv, "--json", summary)
    second = sacscale("aggregate", METRICS[0], "--csv", tmp_path / "other.csv", "--json", summary)
    one_line(second, refusal("--json", summary, first.pid))
    assert not (tmp_path / "other.csv").exists()
    done = finished(tmp_path, first)
    assert done.returncode == 0, done.stderr
    assert len(json.loads(summary.read_text())["configs"]) > 1
    assert not list(tmp_path.glob(".*.lock"))


def test_the_folders_made_for_the_locks_are_removed_on_refusal(tmp_path):
    """An evaluation that fails before writing leaves no folder made for its outputs' locks."""
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    done = sacscale("evaluate", bad, "--model", MODEL, "--output", tmp_path / "new" / "deep" / "e.json", *FAST)
    assert done.returncode == 2, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.pt"]


def test_a_second_verify_writing_the_same_result_file_is_refused(tmp_path):
    """Two verify --output F at once: one's verdict replaced the other's unseen, both rc 0."""
    result = tmp_path / "v.json"
    first = started_paused(tmp_path, "sacscale.evidence.verify:verify", "verify", RESULTS, "--no-metrics",
                           "--output", result)
    second = sacscale("verify", RESULTS, "--no-metrics", "--output", result)
    one_line(second, refusal("--output", result, first.pid))
    done = finished(tmp_path, first)
    assert done.returncode == 0, done.stderr
    assert json.loads(result.read_text())["ok"] is True
    assert not list(tmp_path.glob(".*.lock"))


def test_verify_without_metrics_says_the_report_was_not_checked():
    """`verify --no-metrics` ended "verified N files and 0 runs' metrics" on a set whose page was
    forged, with nothing saying the page was not read."""
    done = sacscale("verify", RESULTS, "--no-metrics")
    assert done.returncode == 0, done.stderr
    assert ("report: not checked (--no-metrics: the files hashed against the manifest only; nothing recomputed, the "
            "report's numbers and words not read)") in done.stdout + done.stderr


def _disk_full_for(monkeypatch, suffix: str) -> None:
    """The disk fills up while the temporary file of the output ending in `suffix` is written."""
    real = os.fsync

    def fsync(fd):
        if os.readlink(f"/proc/self/fd/{fd}").endswith(suffix):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd)

    monkeypatch.setattr("sacscale.atomic.os.fsync", fsync)


@pytest.mark.parametrize("earlier", [False, True])
def test_evaluate_whose_figure_cannot_be_written_leaves_no_new_record(tmp_path, capsys, monkeypatch, earlier):
    """The record was written, then the figure met a full disk: the record stayed, beside no
    figure or an earlier run's. Now neither is new: none, or the earlier pair untouched."""
    stored = json.loads((RESULTS / "eval" / "shared_r1_n1_pool7.json").read_text())
    monkeypatch.setattr("sacscale.eval.evaluate.evaluate", lambda *args, **kwargs: stored)
    record, figure = tmp_path / "e.json", tmp_path / "e.png"
    if earlier:
        record.write_text("earlier record")
        figure.write_bytes(b"earlier figure")
    _disk_full_for(monkeypatch, ".png")
    code = main([str(a) for a in ("evaluate", CHECKPOINT, "--model", MODEL, "--output", record, "--figure", figure,
                                  *FAST)])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err == f"sacscale evaluate: error: {figure}: no space left on the device (disk full)"
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == (["e.json", "e.png"] if earlier else [])
    if earlier:
        assert record.read_text() == "earlier record" and figure.read_bytes() == b"earlier figure"


def test_aggregate_whose_statistics_cannot_be_written_leaves_no_table(tmp_path, capsys, monkeypatch):
    csv, summary = tmp_path / "s.csv", tmp_path / "s.json"
    _disk_full_for(monkeypatch, ".json")
    code = main([str(a) for a in ("aggregate", *METRICS, "--csv", csv, "--json", summary)])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err == f"sacscale aggregate: error: {summary}: no space left on the device (disk full)"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("earlier", [False, True])
def test_compare_learning_whose_figure_cannot_be_written_leaves_no_new_record(tmp_path, capsys, monkeypatch, earlier):
    """compare-learning wrote its JSON and then its figure: a full disk at the figure left the
    JSON beside no figure or an older one. Now the figure is drawn first and both move together."""
    record, figure = tmp_path / "c.json", tmp_path / "c.png"
    if earlier:
        record.write_text("earlier record")
        figure.write_bytes(b"earlier figure")
    _disk_full_for(monkeypatch, ".png")
    run = RESULTS / "runs" / "shared_r1_n1_pool7"
    code = main([str(a) for a in ("compare-learning", f"a={run}", "--output", record, "--figure", figure)])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err == f"sacscale compare-learning: error: {figure}: no space left on the device (disk full)"
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == (["c.json", "c.png"] if earlier else [])
    if earlier:
        assert record.read_text() == "earlier record" and figure.read_bytes() == b"earlier figure"


def test_compare_learning_writes_both_when_it_can(tmp_path, capsys):
    record, figure = tmp_path / "c.json", tmp_path / "c.png"
    run = RESULTS / "runs" / "shared_r1_n1_pool7"
    assert main([str(a) for a in ("compare-learning", f"a={run}", "--output", record, "--figure", figure)]) == 0
    assert json.loads(record.read_text())["runs"] and figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
