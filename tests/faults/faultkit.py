"""Helpers of the fault-injection tests: run the real `sacscale` CLI in its own session,
find its processes, inject a fault, and check what is left (processes, /dev/shm, files).

Every test records what happened (fault, exit status, elapsed time, message) through
`record()`: printed (pytest shows it with -s or on failure) and, when the environment
variable SACSCALE_FAULT_LOG names a file, appended to it as one JSON line.
"""

from __future__ import annotations

import glob
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[2]
SACSCALE = str(Path(sys.executable).parent / "sacscale")
SHM_GLOB = "/dev/shm/sacscale_*"

# The smallest learner that still runs every code path: one critic and one actor update
# per iteration, 32-unit networks, learning from the 8th iteration on (8 envs x 8 = 64 rows).
TINY_EXTRA = {"learning_starts": 64, "actor_hidden": [32], "critic_hidden": [32], "num_atoms": 11}


def train_cmd(log_dir: Path, model: Path, devices: str = "cpu", iterations: int = 100_000, timeout_s: float = 20,
              extra: dict | None = None, log_every: int = 1, **flags) -> list[str]:
    """`sacscale train` at the smallest sizes; `flags` become `--name value` options."""
    cmd = [SACSCALE, "train", "--devices", devices, "--num-envs", "8", "--batch-size", "32",
           "--num-critic-updates", "1", "--num-actor-updates", "1", "--iterations", str(iterations),
           "--replay-per-env", "16", "--log-every", str(log_every), "--timeout-s", str(timeout_s),
           "--sim-threads", "1", "--model", str(model), "--log-dir", str(log_dir),
           "--extra", json.dumps({**TINY_EXTRA, **(extra or {})})]
    for name, value in flags.items():
        cmd += [f"--{name.replace('_', '-')}", str(value)]
    return cmd


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def shm_entries() -> set[str]:
    return {os.path.basename(p) for p in glob.glob(SHM_GLOB)}


def _session_of(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            stat = fh.read()
    except OSError:
        return None
    # fields after the command name (which may hold spaces) start after the last ')'
    fields = stat[stat.rindex(")") + 2 :].split()
    if fields[0] == "Z":
        return None  # a zombie holds no resources; its parent reaps it
    return int(fields[3])


def session_members(sid: int) -> list[psutil.Process]:
    """Live processes of session `sid` (a job started with start_new_session=True and every
    process it created, including orphans re-parented to init)."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and _session_of(int(entry)) == sid:
            try:
                out.append(psutil.Process(int(entry)))
            except psutil.NoSuchProcess:
                pass
    return out


def describe(procs: list[psutil.Process]) -> list[str]:
    out = []
    for p in procs:
        try:
            out.append(f"{p.pid}: {' '.join(p.cmdline())[:160]}")
        except psutil.Error:
            out.append(f"{p.pid}: (gone)")
    return out


def _mapped_path(line: str) -> str:
    """The file of one /proc/PID/maps line, without the " (deleted)" of an unlinked one
    (the trainer unlinks its blocks as soon as they are created)."""
    parts = line.split(None, 5)
    return parts[5].strip().removesuffix(" (deleted)") if len(parts) == 6 else ""


def maps_block(pid: int, suffix: str) -> bool:
    """Whether process `pid` maps a /dev/shm/sacscale_* block of the kind `suffix` names."""
    try:
        with open(f"/proc/{pid}/maps") as fh:
            # a block's name ends in a random part after its kind: `..._r0_slots_<hex>`
            return any("/dev/shm/sacscale_" in path and path.rpartition("_")[0].endswith(suffix)
                       for path in map(_mapped_path, fh))
    except OSError:
        return False


def wait_for(condition, timeout: float, what: str, poll: float = 0.1, job: "Job | None" = None):
    """Poll `condition()` until it returns something truthy; fail naming `what`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        if job is not None and job.proc.poll() is not None:
            raise AssertionError(f"the job exited ({job.proc.returncode}) before {what}:\n{job.stderr()[-3000:]}")
        time.sleep(poll)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}"
                         + (f"\n{job.stderr()[-3000:]}" if job else ""))


def logged_iterations(log_dir: Path, rank: int = 0, budget_s: float = 2.0) -> int:
    """Last `Perf/iteration` in a live run's event file (tolerant of a half-written record),
    read for at most `budget_s`: a lower bound. The loader reads until it catches up with
    the writer, which on a loaded machine it may never do (a run logging every iteration
    writes faster than the pure-Python reader parses); unbounded, this call once kept a
    test, and so its job, running for 15 minutes."""
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    last = 0
    deadline = time.monotonic() + budget_s
    for path in sorted((log_dir / "tb" / f"rank{rank}").glob("events.out.tfevents.*")):
        try:
            for event in EventFileLoader(str(path)).Load():
                for value in event.summary.value:
                    if value.tag == "Perf/iteration":
                        last = max(last, int(event.step))
                if time.monotonic() > deadline:
                    return last
        except Exception:  # noqa: BLE001 - a file being written; read again later
            pass
    return last


class Job:
    """One CLI command in its own session, output in files, every process it makes tracked."""

    def __init__(self, cmd: list[str], workdir: Path, env: dict | None = None, name: str = "job"):
        workdir.mkdir(parents=True, exist_ok=True)
        self.cmd = cmd
        self.out_path = workdir / f"{name}.stdout"
        self.err_path = workdir / f"{name}.stderr"
        self.shm_before = shm_entries()
        self.t_start = time.monotonic()
        # SIGINT at its default whatever this process inherited: a suite started in the background
        # (`cmd &`) ignores it, and a job started with it ignored keeps it ignored, as it should
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                         env=env, cwd=workdir, start_new_session=True,
                                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        self.pid = self.proc.pid
        self.t_exit: float | None = None
        self.mapped: set[str] = set()

    def stderr(self) -> str:
        return self.err_path.read_text(errors="replace")

    def message(self, prefix: str = "sacscale train:") -> str:
        """The command's own last message line (warnings printed at exit may follow it)."""
        lines = [line for line in self.stderr().splitlines() if prefix in line]
        return lines[-1][lines[-1].index(prefix):] if lines else ""

    def stdout(self) -> str:
        return self.out_path.read_text(errors="replace")

    def wait(self, timeout: float) -> int:
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{self.cmd[:3]} still running after {timeout:.0f} s:\n{self.stderr()[-3000:]}")
        self.t_exit = time.monotonic()
        return code

    def processes(self) -> list[psutil.Process]:
        return session_members(self.pid)

    def collector(self, rank: int = 0) -> psutil.Process | None:
        """The collector process of `rank`: it maps the rank's slots block, and so does its
        parent (the rank's learner)."""
        for p in self.processes():
            try:
                if (p.pid != self.pid and maps_block(p.pid, f"_r{rank}_slots")
                        and maps_block(p.ppid(), f"_r{rank}_slots")):
                    return p
            except psutil.Error:
                pass
        return None

    def learner(self, rank: int = 0) -> psutil.Process | None:
        """The learner process of `rank` (the job's own process for a single rank)."""
        for p in self.processes():
            try:
                if maps_block(p.pid, f"_r{rank}_slots") and not maps_block(p.ppid(), f"_r{rank}_slots"):
                    return p
            except psutil.Error:
                pass
        return None

    def leftovers(self, grace: float = 5.0) -> list[str]:
        """Processes of the job's session still alive `grace` seconds after it exited."""
        deadline = time.monotonic() + grace
        while True:
            alive = self.processes()
            if not alive or time.monotonic() > deadline:
                return describe(alive)
            time.sleep(0.1)

    def new_shm(self) -> set[str]:
        """The job's sacscale_<pid>_* blocks still there, plus every /dev/shm entry (blocks,
        semaphores) a job process had mapped at the last `note_mapped()` that still exists.
        (Entries of other processes, e.g. a concurrent test run, do not count.)"""
        left = {os.path.basename(p) for p in self.mapped if os.path.exists(p)}
        return {name for name in shm_entries() - self.shm_before if name.startswith(f"sacscale_{self.pid}_")} | left

    def note_mapped(self) -> set[str]:
        """Remember the /dev/shm entries the job's processes map now (call it mid-run)."""
        for p in self.processes():
            try:
                with open(f"/proc/{p.pid}/maps") as fh:
                    self.mapped |= {path for path in map(_mapped_path, fh) if path.startswith("/dev/shm/")}
            except OSError:
                pass
        return self.mapped

    def cleanup(self) -> None:
        """Kill whatever of the job is still alive (test teardown)."""
        for p in self.processes():
            try:
                p.kill()
            except psutil.Error:
                pass
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        for name in self.new_shm():
            try:
                os.unlink(f"/dev/shm/{name}")
            except FileNotFoundError:
                pass


def kill(proc: psutil.Process, sig: int = signal.SIGKILL) -> float:
    """Send `sig`; returns the monotonic time it was sent."""
    t = time.monotonic()
    os.kill(proc.pid, sig)
    return t


def record(fault: str, **facts) -> None:
    line = json.dumps({"fault": fault, **facts}, default=str)
    print(f"FAULT RECORD {line}")
    target = os.environ.get("SACSCALE_FAULT_LOG")
    if target:
        with open(target, "a") as fh:
            fh.write(line + "\n")
