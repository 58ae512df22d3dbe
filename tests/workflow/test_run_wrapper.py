"""`sacscale record-run` (sacscale.pipeline.run_record; workflow/scripts/run_training.py is the
same entry point as a script): a run directory appears complete or not at all, and the
trainer's progress bar reaches the terminal as a few short lines."""

import json
import subprocess
import sys
import textwrap
import time

from pipeline_helpers import REPO

WRAPPER = REPO / "workflow" / "scripts" / "run_training.py"

# A stand-in trainer: writes an event file under --log-dir, prints, exits with CODE.
FAKE = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    args = sys.argv[1:]
    log_dir = Path(args[args.index("--log-dir") + 1])
    mode = args[args.index("--mode") + 1]
    print("starting", mode, flush=True)
    if mode == "progress":  # the real trainer's bar: tqdm on stderr, not a terminal
        from tqdm import tqdm
        bar = tqdm(total=24, desc="train", unit="it", file=sys.stderr, mininterval=0, miniters=1)
        for _ in range(24):
            bar.set_postfix(fps="1,234", ret="0.10", refresh=False)
            bar.update(1)
        bar.close()
    if mode == "hang":
        time.sleep(600)
    if mode != "no-events":
        (log_dir / "tb" / "rank0").mkdir(parents=True)
        (log_dir / "tb" / "rank0" / "events.out.tfevents.1.x").write_bytes(b"x")
    print("stderr line", file=sys.stderr, flush=True)
    sys.exit(3 if mode == "fail" else 0)
""")


def wrap(tmp_path, mode, timeout=60, extra=(), entry=None):
    script = tmp_path / "fake_train.py"
    script.write_text(FAKE)
    run_dir = tmp_path / "results" / "S" / "runs" / "p_r1_n1"
    work = tmp_path / "results" / "S" / "runs" / ".p_r1_n1.partial"
    attic = tmp_path / "logs" / "attempts"
    resolved = json.dumps({"run": "p_r1_n1", "config": "n1", "repeat": 1, "seed": 7})
    cmd = [*(entry or [sys.executable, str(WRAPPER)]), "--run-dir", str(run_dir), "--work-dir", str(work),
           "--attic", str(attic),
           "--resolved-json", resolved, "--timeout", str(timeout), "--env", "NCCL_P2P_DISABLE=1", *extra,
           "--", sys.executable, str(script), "--log-dir", str(work), "--mode", mode]
    started = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    return proc, run_dir, work, attic, time.monotonic() - started


def test_success_renames_a_complete_directory(tmp_path):
    run_dir = tmp_path / "results" / "S" / "runs" / "p_r1_n1"
    run_dir.mkdir(parents=True)  # Snakemake creates the output's parent before the job
    proc, run_dir, work, attic, _ = wrap(tmp_path, "ok")
    assert proc.returncode == 0, proc.stderr
    assert not work.exists() and list(attic.iterdir()) == []  # made at the start, left empty
    record = json.loads((run_dir / "run.json").read_text())
    assert record["status"] == "completed" and record["exit_status"] == 0
    assert record["seed"] == 7 and record["resolved_config"]["config"] == "n1"
    assert record["command"][-2:] == ["--mode", "ok"] and "--log-dir" in record["command_line"]
    assert record["env_set"] == {"NCCL_P2P_DISABLE": "1"}
    assert record["duration_s"] >= 0 and record["started_at"] < record["ended_at"]
    log = (run_dir / "train.log").read_text()
    assert "starting ok" in log and "stderr line" in log
    assert "starting ok" in proc.stdout  # also teed to the rule's log


def test_failure_marks_nothing_done_and_keeps_the_attempt(tmp_path):
    proc, run_dir, work, attic, _ = wrap(tmp_path, "fail")
    assert proc.returncode == 3
    assert not run_dir.exists() and not work.exists()
    (kept,) = attic.iterdir()
    assert kept.name.startswith("p_r1_n1.failed-")
    record = json.loads((kept / "run.json").read_text())
    assert record["status"] == "failed" and record["exit_status"] == 3
    assert "stderr line" in (kept / "train.log").read_text()
    assert str(kept) in proc.stderr


def test_exit_zero_without_events_is_a_failure(tmp_path):
    """The failure line says why a command that exited 0 failed (it said `exit status 0` alone)."""
    proc, run_dir, work, attic, _ = wrap(tmp_path, "no-events")
    assert proc.returncode == 1 and not run_dir.exists()
    (kept,) = attic.iterdir()
    assert proc.stderr.strip().splitlines()[-1] == (
        f"run_training: run p_r1_n1 failed (exit status 0, but it wrote no rank-0 event file under {work}); "
        f"nothing was marked done. Its log and run.json are kept in {kept}")


def test_timeout_stops_the_process_group(tmp_path):
    proc, run_dir, _, attic, elapsed = wrap(tmp_path, "hang", timeout=2)
    assert proc.returncode != 0 and not run_dir.exists()
    assert elapsed < 60
    (kept,) = attic.iterdir()
    assert kept.name.startswith("p_r1_n1.timed_out-")
    assert json.loads((kept / "run.json").read_text())["timed_out"] is True
    assert "timeout after 2 s" in proc.stderr


def test_missing_command_fails_clearly(tmp_path):
    run_dir = tmp_path / "runs" / "r"
    cmd = [sys.executable, str(WRAPPER), "--run-dir", str(run_dir), "--work-dir", str(tmp_path / "runs" / ".r.partial"),
           "--attic", str(tmp_path / "attic"), "--timeout", "30", "--", "no-such-trainer-command", "train"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 127
    assert "cannot start 'no-such-trainer-command'" in proc.stderr
    assert not run_dir.exists()


def test_stale_directories_are_moved_aside_not_deleted(tmp_path):
    run_dir = tmp_path / "results" / "S" / "runs" / "p_r1_n1"
    work = run_dir.parent / ".p_r1_n1.partial"
    (run_dir / "tb").mkdir(parents=True)
    (run_dir / "old.txt").write_text("an earlier run without run.json")
    work.mkdir()
    (work / "train.log").write_text("interrupted attempt")
    proc, run_dir, _, attic, _ = wrap(tmp_path, "ok")
    assert proc.returncode == 0, proc.stderr
    assert not (run_dir / "old.txt").exists()
    names = sorted(p.name.split("-")[0] for p in attic.iterdir())
    assert names == ["p_r1_n1.interrupted", "p_r1_n1.superseded"]


def test_progress_lines_reach_stderr_and_the_full_output_stdout(tmp_path):
    proc, run_dir, _, _, _ = wrap(tmp_path, "progress", extra=["--progress-every", "10", "--progress-every-s", "3600"],
                                  entry=[sys.executable, "-m", "sacscale.cli", "record-run"])
    assert proc.returncode == 0, proc.stderr
    lines = [x for x in proc.stderr.splitlines() if x.startswith("training p_r1_n1: ")]
    assert lines == [
        "training p_r1_n1: iteration 10/24, 1,234 env steps/s, ETA " + lines[0].rsplit(" ", 1)[1],
        "training p_r1_n1: iteration 20/24, 1,234 env steps/s, ETA " + lines[1].rsplit(" ", 1)[1],
        "training p_r1_n1: iteration 24/24, 1,234 env steps/s, ETA 00:00",
    ], proc.stderr
    assert "24/24" in (run_dir / "train.log").read_text()          # the whole bar stays in the run's log
    assert "24/24" in proc.stdout and "training p_r1_n1:" not in proc.stdout  # and the rule's log
    assert "completed in" in proc.stderr and "completed in" in proc.stdout  # the wrapper's own lines: both


def test_progress_echo_by_iterations_and_by_seconds():
    import io

    from sacscale.pipeline.run_output import ProgressEcho

    now = [0.0]
    out = io.StringIO()
    echo = ProgressEcho("training r", every_it=0, every_s=30, out=out, clock=lambda: now[0])
    bar = "train:  {p}%|####| {i}/100 [00:01<00:09,  9.00it/s, fps=5,000, ret=0.1]"
    echo.feed(b"starting\n" + bar.format(p=0, i=0).encode() + b"\r")
    echo.feed(bar.format(p=5, i=5).encode() + b"\r" + bar.format(p=9, i=9).encode()[:20])  # split mid-line
    assert out.getvalue() == ""                       # fewer than 10 iterations (a tenth), under 30 s
    echo.feed(bar.format(p=9, i=9).encode()[20:] + b"\r" + bar.format(p=10, i=10).encode() + b"\r")
    assert out.getvalue() == "training r: iteration 10/100, 5,000 env steps/s, ETA 00:09\n"
    now[0] = 31.0
    echo.feed(bar.format(p=12, i=12).encode() + b"\r")   # 2 iterations, but 31 s since the last line
    echo.feed(bar.format(p=13, i=13).encode() + b"\r")   # neither
    last = ("\x1b[A" + bar.format(p=100, i=100).replace("####", "\u2588\u2588")).encode() + b"\n"
    echo.feed(last[:18])
    echo.feed(last[18:])  # the last iteration, always (here fed in two pieces)
    assert out.getvalue().splitlines()[1:] == ["training r: iteration 12/100, 5,000 env steps/s, ETA 00:09",
                                               "training r: iteration 100/100, 5,000 env steps/s, ETA 00:00"]
