"""Runs one fault scenario inside a private mount namespace (`unshare -m`, root only), so
its /dev/shm and its small "disk" are tmpfs mounts nobody else sees: what is left there
is this scenario's alone. Prints one JSON line with what happened (the test checks it).

    unshare -m --propagation private python private_mounts.py SCENARIO JSON_ARGS
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from faultkit import Job, logged_iterations, train_cmd, wait_for  # noqa: E402


def mount_tmpfs(path: str, size: str) -> None:
    os.makedirs(path, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", path], check=True)


def fill(directory: Path) -> None:
    """Take every free byte of the file system under `directory`."""
    fd = os.open(directory / "filler", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        for chunk in (2**16, 4096, 1):
            try:
                while True:
                    os.write(fd, b"\0" * chunk)
            except OSError:
                pass
    finally:
        os.close(fd)


def shm_left() -> list[str]:
    return sorted(os.listdir("/dev/shm"))


def group_signal(a: dict) -> dict:
    """SIGHUP (or SIGKILL) to the job's whole process group mid-run."""
    mount_tmpfs("/dev/shm", "256m")
    work = Path(a["work"])
    log_dir = work / "run"
    job = Job(train_cmd(log_dir, Path(a["model"]), devices=a["devices"]), work)
    try:
        wait_for(lambda: logged_iterations(log_dir) >= 10, 120, "10 logged iterations", job=job)
        mapped = sorted(job.note_mapped())
        sig = signal.Signals[a["signal"]]
        sent = time.monotonic()
        os.killpg(job.pid, sig)
        code = job.wait(60)
        exit_after = time.monotonic() - sent
        leftovers = job.leftovers(grace=15)
        gone_after = time.monotonic() - sent
        meta = json.loads((log_dir / "train_meta.json").read_text())
        return {"exit_status": code, "exit_after_s": round(exit_after, 2), "all_gone_after_s": round(gone_after, 2),
                "leftovers": leftovers, "shm_left": shm_left(), "mapped_while_running": mapped,
                "status": meta.get("status"), "message": job.message(), "stderr_tail": job.stderr()[-1500:]}
    finally:
        job.cleanup()


def disk_full_at_start(a: dict) -> dict:
    root = Path(a["work"]) / "disk"
    mount_tmpfs(str(root), "512k")
    fill(root)
    log_dir = root / "run"
    t0 = time.monotonic()
    proc = subprocess.run([*train_cmd(log_dir, Path(a["model"]), iterations=5), "--min-free-mb", "0"],
                          capture_output=True, text=True)
    return {"exit_status": proc.returncode, "seconds": round(time.monotonic() - t0, 2),
            "stderr": proc.stderr[-2000:], "left": sorted(str(p.relative_to(root)) for p in root.rglob("*"))}


def disk_full_mid_run(a: dict) -> dict:
    root = Path(a["work"]) / "disk"
    mount_tmpfs(str(root), "4m")
    log_dir = root / "run"
    job = Job([*train_cmd(log_dir, Path(a["model"])), "--min-free-mb", "0"], Path(a["work"]))
    try:
        wait_for(lambda: logged_iterations(log_dir) >= 10, 120, "10 logged iterations", job=job)
        fill(root)
        filled = time.monotonic()
        code = job.wait(90)
        meta = json.loads((log_dir / "train_meta.json").read_text())
        files = [p for p in root.rglob("*") if p.is_file()]
        return {"exit_status": code, "exit_after_s": round(time.monotonic() - filled, 2), "status": meta.get("status"),
                "error": meta.get("error"), "message": job.message(), "leftovers": job.leftovers(),
                "tmp_files": sorted(p.name for p in files if ".tmp" in p.name),
                "empty_files": sorted(p.name for p in files if p.stat().st_size == 0),
                "stderr_tail": job.stderr()[-1500:]}
    finally:
        job.cleanup()


def wrapper_disk_full(a: dict) -> dict:
    """The pipeline's run wrapper on a disk that fills while the command writes."""
    root = Path(a["work"]) / "disk"
    mount_tmpfs(str(root), "1m")
    run_dir, work, attic = root / "results/S/runs/r1", root / "results/S/runs/.r1.partial", root / "logs/S/attempts"
    run_dir.parent.mkdir(parents=True)
    noisy = "import sys\nfor i in range(4000): print('x' * 500, flush=True)\n"
    proc = subprocess.run([sys.executable, a["wrapper"], "--run-dir", str(run_dir), "--work-dir", str(work),
                           "--attic", str(attic), "--timeout", "60", "--", sys.executable, "-c", noisy],
                          capture_output=True, text=True)
    return {"exit_status": proc.returncode, "stderr": proc.stderr[-2000:],
            "results": sorted(p.name for p in run_dir.parent.iterdir()),
            "attic": sorted(p.name for p in attic.iterdir()) if attic.exists() else []}


if __name__ == "__main__":
    scenario, args = sys.argv[1], json.loads(sys.argv[2])
    print(json.dumps(globals()[scenario](args)))
