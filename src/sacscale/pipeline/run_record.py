"""Record one training command as one evidence directory, all or nothing.

Used by the pipeline's run rule through workflow/scripts/run_training.py:

    python workflow/scripts/run_training.py --run-dir results/S/runs/NAME \
        --work-dir results/S/runs/.NAME.partial --attic logs/S/attempts \
        --resolved-json '{...}' --timeout 3600 [--env KEY=VALUE ...] -- sacscale train ... --log-dir WORK_DIR

The command runs in its own process group with its output teed into WORK_DIR/train.log
(and this process's stdout). When it exits 0 and left rank 0's event file, run.json
(command, resolved config, seed, start/end, exit status) is written into the work
directory, which is then renamed to RUN_DIR in one step: RUN_DIR either does not exist
or is complete. On failure, timeout or interruption (SIGTERM/SIGINT are forwarded to
the command's process group) the work directory, with its run.json and train.log, moves
to the attic for diagnosis and the exit status is non-zero. Nothing else is deleted: an
older RUN_DIR without run.json is moved to the attic too.
"""

from __future__ import annotations

import argparse
import errno
import json
import shutil
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

from sacscale.evidence.atomic import write_json
from sacscale.pipeline.environment import host_info

GRACE_S = 30.0


def _now() -> tuple[float, str]:
    t = time.time()
    return t, datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="milliseconds")


def _stamp() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")


def _move_aside(path: Path, attic: Path, why: str) -> Path | None:
    if not path.exists():
        return None
    if path.is_dir() and not any(path.iterdir()):
        path.rmdir()  # Snakemake creates the output's parent directory before the job
        return None
    attic.mkdir(parents=True, exist_ok=True)
    target = attic / f"{path.name.lstrip('.').removesuffix('.partial')}.{why}-{_stamp()}"
    os.replace(path, target)
    print(f"run_training: moved {path} to {target}", file=sys.stderr)
    return target


def _code_state() -> dict:
    """The commit (and dirty flag) of the code that ran: verify checks it against the
    environment record of the run set."""
    import sacscale
    from sacscale.pipeline.environment import git_state

    state = git_state(Path(sacscale.__file__).resolve().parent)
    return {k: state.get(k) for k in ("commit", "dirty", "error") if k in state}


def _set_aside_or_remove(work: Path, attic: Path, why: str) -> Path | None:
    """Move a failed attempt to the attic; should even that fail (a full disk can refuse
    the attic's directory), remove it: an incomplete directory must not stay in results/."""
    try:
        return _move_aside(work, attic, why)
    except OSError as exc:
        print(f"run_training: cannot move {work} to {attic} ({exc.strerror or exc}); removing it", file=sys.stderr)
        shutil.rmtree(work, ignore_errors=True)
        return None


def _trainer_dies_with_wrapper() -> None:
    from sacscale.parallel.launch import die_with_parent

    die_with_parent(signal.SIGTERM)


def _kill_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


class Supervisor:
    """Runs the command, tees its output, enforces the timeout, forwards SIGTERM/SIGINT."""

    def __init__(self, cmd: list[str], env: dict[str, str], log_path: Path, timeout_s: float):
        self.cmd, self.env, self.log_path, self.timeout_s = cmd, env, log_path, timeout_s
        self.timed_out = False
        self.interrupted = None
        self.log_error: str | None = None
        self.proc: subprocess.Popen | None = None

    def _stop(self, reason: str) -> None:
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        print(f"run_training: {reason}; stopping the process group {proc.pid}", file=sys.stderr, flush=True)
        _kill_group(proc, signal.SIGTERM)
        deadline = time.monotonic() + GRACE_S
        while proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        if proc.poll() is None:
            _kill_group(proc, signal.SIGKILL)

    def _log_failed(self, exc: OSError) -> None:
        full = " (disk full)" if exc.errno in (errno.ENOSPC, errno.EDQUOT) else ""
        self.log_error = f"cannot write {self.log_path}{full}: {exc.strerror or exc}"
        print(f"run_training: {self.log_error}; the rest of the output goes to stdout only",
              file=sys.stderr, flush=True)

    def _on_timeout(self) -> None:
        self.timed_out = True
        self._stop(f"timeout after {self.timeout_s:.0f} s")

    def _on_signal(self, signum, _frame) -> None:
        self.interrupted = signal.Signals(signum).name
        threading.Thread(target=self._stop, args=(f"received {self.interrupted}",), daemon=True).start()

    def run(self) -> int:
        child_env = {**os.environ, **self.env, "PYTHONUNBUFFERED": "1"}
        try:
            log = open(self.log_path, "wb", buffering=0)  # unbuffered: no late flush can fail at close
        except OSError as exc:
            self._log_failed(exc)
            log = open(os.devnull, "wb")  # the output still reaches this process's stdout
        with log:
            try:
                self.proc = subprocess.Popen(
                    self.cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                    env=child_env, start_new_session=True,
                    # the trainer must not outlive a wrapper that was SIGKILLed (its own
                    # SIGTERM handling then stops ranks and collectors cleanly)
                    preexec_fn=_trainer_dies_with_wrapper,
                )
            except OSError as exc:
                msg = f"run_training: cannot start {self.cmd[0]!r}: {exc}\n"
                log.write(msg.encode())
                sys.stderr.write(msg)
                return 127
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, self._on_signal)
            timer = threading.Timer(self.timeout_s, self._on_timeout)
            timer.daemon = True
            timer.start()
            try:
                assert self.proc.stdout is not None
                for chunk in iter(lambda: self.proc.stdout.read1(65536), b""):
                    if self.log_error is None:
                        try:
                            log.write(chunk)
                            log.flush()
                        except OSError as exc:  # e.g. the disk is full: keep running, keep teeing
                            self._log_failed(exc)
                    try:
                        sys.stdout.buffer.write(chunk)
                        sys.stdout.flush()
                    except OSError:
                        pass
                return self.proc.wait()
            finally:
                timer.cancel()
                if self.proc.poll() is None:
                    self._stop("supervisor exiting")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="run_training.py", description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--run-dir", required=True, type=Path)
    parser.add_argument("--work-dir", required=True, type=Path, help="where the command writes while it runs")
    parser.add_argument("--attic", required=True, type=Path, help="where failed or stale attempts are kept")
    parser.add_argument("--resolved-json", default="{}", help="the run's resolved configuration (JSON object)")
    parser.add_argument("--timeout", type=float, required=True, help="wall-clock limit in seconds")
    parser.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                        help="set for the command only (repeatable)")
    parser.add_argument("cmd", nargs=argparse.REMAINDER, help="-- then the command")
    args = parser.parse_args(argv)
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        parser.error("no command given after --")
    env = {}
    for item in args.env:
        key, sep, value = item.partition("=")
        if not sep or not key:
            parser.error(f"--env {item!r}: expected KEY=VALUE")
        env[key] = value
    resolved = json.loads(args.resolved_json)

    run_dir, work = args.run_dir, args.work_dir
    _move_aside(work, args.attic, "interrupted")
    _move_aside(run_dir, args.attic, "superseded")
    try:
        work.mkdir(parents=True)
    except OSError as exc:
        print(f"run_training: cannot create {work}: {exc.strerror or exc}; the run did not start", file=sys.stderr)
        return 1

    t0, started = _now()
    supervisor = Supervisor(cmd, env, work / "train.log", args.timeout)
    code = supervisor.run()
    t1, ended = _now()

    events = sorted((work / "tb" / "rank0").glob("events.out.tfevents.*"))
    if supervisor.timed_out:
        status = "timed_out"
    elif supervisor.interrupted:
        status = "interrupted"
    elif code != 0 or supervisor.log_error:
        status = "failed"  # a run whose log could not be kept is not complete evidence
    elif not events:
        status = "failed"
        print(f"run_training: the command exited 0 but wrote no {work / 'tb' / 'rank0' / 'events.out.tfevents.*'}",
              file=sys.stderr)
    else:
        status = "completed"
    record = {
        "run": resolved.get("run", run_dir.name),
        "status": status,
        "exit_status": code,
        "timed_out": supervisor.timed_out,
        "interrupted_by": supervisor.interrupted,
        "timeout_s": args.timeout,
        "command": cmd,
        "command_line": shlex.join(cmd),
        "log_dir_while_running": str(work),
        "run_dir": str(run_dir),
        "env_set": env,
        "seed": resolved.get("seed"),
        "resolved_config": resolved,
        "code": _code_state(),
        "started_at": started,
        "ended_at": ended,
        "start_time": t0,
        "end_time": t1,
        "duration_s": round(t1 - t0, 3),
        "python": sys.executable,
        "host": host_info(),
    }
    if supervisor.log_error:
        record["error"] = supervisor.log_error
    try:
        write_json(work / "run.json", record)
    except OSError as exc:
        status = "failed"
        print(f"run_training: cannot write {work / 'run.json'}: {exc.strerror or exc}", file=sys.stderr)
    if status == "completed":
        os.replace(work, run_dir)
        print(f"run_training: {run_dir} completed in {t1 - t0:.1f} s")
        return 0
    kept = _set_aside_or_remove(work, args.attic, status)
    print(
        f"run_training: run {record['run']} {status} (exit status {code}); nothing was marked done. "
        f"Its log and run.json are kept in {kept}",
        file=sys.stderr,
    )
    return code if code and code > 0 else 1
