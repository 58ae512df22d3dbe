"""Record one training command as one evidence directory, all or nothing.

Used by the pipeline's run rule as `sacscale record-run` (workflow/scripts/run_training.py
is the same entry point as a script):

    sacscale record-run --run-dir results/S/runs/NAME \
        --work-dir results/S/runs/.NAME.partial --attic logs/S/attempts \
        --resolved-json '{...}' --timeout 3600 [--env KEY=VALUE ...] -- sacscale train ... --log-dir WORK_DIR

The command runs in its own process group with its output teed into WORK_DIR/train.log
and this process's stdout, which --log points at the run's log once the locks below are held
(sacscale.pipeline.run_log). Standard error gets only
short lines for the terminal: the wrapper's own messages and, from the trainer's progress
bar, one line every --progress-every iterations or --progress-every-s seconds
(iteration, env steps/s, ETA). When it exits 0 and left rank 0's event file, run.json
(command, resolved config, seed, start/end, exit status) is written into the work
directory, which is then renamed to RUN_DIR in one step (across mounts, copied whole
beside it first): RUN_DIR either does not exist or is complete. On failure, timeout or
interruption (SIGTERM, SIGINT or SIGHUP: the command's process group is stopped) the work
directory, with its run.json and train.log, moves to the attic for diagnosis and the exit
status is non-zero (stopped: `sacscale record-run: interrupted (SIGTERM)`, 143). Nothing
else is deleted: an older RUN_DIR without run.json is moved to the attic too.

A work directory found at the start is taken for an earlier attempt's and moved to the
attic (named as its run.json says, else `interrupted`; one holding a completed run is
refused), so the run holds locks of its own for its whole length, taken before anything is
moved: one beside RUN_DIR and one beside WORK_DIR (`.NAME.lock`, `..NAME.partial.lock`;
sacscale.locks.lock_beside), removed at the end; they are not the trainer's own lock of its
run folder (`..NAME.partial.trainer-lock`), which a plain `train` there holds and which
refuses this run naming that trainer (as does one at RUN_DIR's name, which would otherwise
be set aside mid-run). A plain train looks at this run's locks in turn and is refused, but
in the work folder this run names to its command; a RUN_DIR another command makes while
this run trains leaves the completed run in WORK_DIR, named, exit status 1. A second
record-run given either folder while the first runs is refused at once in one line naming
the first's pid, exit status 2, and touches nothing; a lock file a killed run left is held
by no one: the next takes it. --env is judged as planning judges a run configuration's env.
With --machine-lock the machine's training lock (sacscale.pipeline.machine_lock) is held
too, and its locked descriptor passed on, open, to the command: its own hold, which a
`sacscale train` run so takes as its own rather than as a measured run's to refuse.
Before the locks the folders are checked (sacscale.pipeline.run_folders) and, under them,
the attic is made: an attic that cannot take an attempt is refused before the run, as are a
run or work folder with another command's live run deeper down and any of the four folders
(run, work, attic, learning state) in another live run's folder, looked at before the locks
and again under them (sacscale.pipeline.record_run_guards).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import sacscale
from sacscale.analysis.events import EventFileError
from sacscale.atomic import write_json
from sacscale.long_names import error_text
from sacscale.locks import (RECORDED_IN_VARIABLE, TRAINER_LOCK, HeldBeside, UntrustedLock, holder_beside, lock_beside,
                             lock_file_beside)
from sacscale.pipeline.completed_run import compress_rank_events, move_learning_state, not_in_place
from sacscale.pipeline.environment import code_state, host_info
from sacscale.pipeline.folder_options import folder_path, optional_folder_path, work_folder_path
from sacscale.pipeline.machine_lock import LockError, MachineBusy, inherited, training_machine
from sacscale.pipeline.moves import SourceLeft, move
from sacscale.pipeline.run_folders import folders_problem, log_problem, make_attic, make_state_dir
from sacscale.pipeline.plan_values import PlanError
from sacscale.pipeline.record_run_guards import live_folders_problem, live_run_inside, taken_meanwhile
from sacscale.pipeline.record_run_values import env_pairs, resolved_json
from sacscale.pipeline.run_config import check_run_env
from sacscale.pipeline.run_log import PREFIX, output_to_log
from sacscale.pipeline.run_log import say as _say
from sacscale.pipeline.run_output import ProgressEcho
from sacscale.pipeline.set_aside import (
    completed_leftover_problem,
    dead_copies_removed,
    leftovers_set_aside,
    move_aside,
    set_aside,
)
from sacscale.processes import GroupChild, start_group
from sacscale.stopping import Interrupted, ended_by_stop, supervised_stop_signals
from sacscale.trainers.unilab import rank0_event_files
from sacscale.usage import UsageParser

GRACE_S = 30.0


def _now() -> tuple[float, str]:
    t = time.time()
    return t, datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds")


def _move_aside(path: Path, attic: Path, why: str) -> Path | None:
    return move_aside(path, attic, why, _say)


def _code_state() -> dict:
    """The commit (and dirty flag) of the code that ran: verify checks it against the set's environment record."""
    state = code_state(Path(sacscale.__file__).resolve().parent)
    return {k: state.get(k) for k in ("commit", "dirty", "error") if k != "error" or k in state}  # nulls: no checkout


def _set_aside(work: Path, attic: Path, why: str) -> str:
    return set_aside(work, attic, why, _say)


class Supervisor:
    """Runs the command, tees its output, enforces the timeout, stops it on a stop signal."""

    def __init__(self, cmd: list[str], env: dict[str, str], log_path: Path, timeout_s: float,
                 progress: ProgressEcho | None = None, held_fd: int | None = None):
        self.cmd, self.env, self.log_path, self.timeout_s, self.held_fd = cmd, env, log_path, timeout_s, held_fd
        self.progress = progress
        self.timed_out = False
        self.interrupted, self.stopped_by = None, None  # the first stop signal's name and number
        self.log_error: str | None = None
        self.trainer: GroupChild | None = None

    def _stop(self, reason: str) -> None:
        trainer = self.trainer
        if trainer is None or trainer.poll() is not None:
            return
        _say(f"{reason}; stopping the process group {trainer.pid}")
        trainer.end(signal.SIGTERM, GRACE_S, reap_s=0)  # run() reaps it, once its output has ended

    def _log_failed(self, exc: OSError) -> None:
        full = " (disk full)" if exc.errno in (errno.ENOSPC, errno.EDQUOT) else ""
        self.log_error = f"cannot write {self.log_path}{full}: {exc.strerror or exc}"
        _say(f"{self.log_error}; the rest of the output goes to stdout only")

    def _watch_deadline(self) -> None:
        """In a thread of its own: the main thread is busy teeing the output."""
        if self.trainer.wait(self.timeout_s).timed_out:
            self.timed_out = True
            self._stop(f"timeout after {self.timeout_s:.0f} s")

    def _on_signal(self, signum, _frame) -> None:
        if self.stopped_by is not None:  # the first stop is the one the run and the wrapper end by
            return
        self.stopped_by, self.interrupted = signum, signal.Signals(signum).name
        threading.Thread(target=self._stop, args=(f"received {self.interrupted}",), daemon=True).start()

    def run(self) -> int:
        held = () if self.held_fd is None else (self.held_fd,)  # the machine lock, handed on open: its hold too
        child_env = {**os.environ, **self.env, "PYTHONUNBUFFERED": "1", **inherited(self.held_fd),
                     RECORDED_IN_VARIABLE: os.path.realpath(self.log_path.parent)}
        try:
            log = open(self.log_path, "wb", buffering=0)  # unbuffered: no late flush can fail at close
        except OSError as exc:
            self._log_failed(exc)
            log = open(os.devnull, "wb")  # the output still reaches this process's stdout
        with log:
            try:
                # the trainer must not outlive a wrapper that was SIGKILLed (its own SIGTERM
                # handling then stops ranks and collectors cleanly)
                self.trainer = start_group(self.cmd, die_with=signal.SIGTERM, stdout=subprocess.PIPE, pass_fds=held,
                                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=child_env)
            except OSError as exc:
                msg = f"cannot start {self.cmd[0]!r}: {exc}"
                log.write(f"{PREFIX}: {msg}\n".encode())
                _say(msg)
                return 127
            for sig in supervised_stop_signals():
                signal.signal(sig, self._on_signal)
            threading.Thread(target=self._watch_deadline, daemon=True).start()
            try:
                self._tee(log)
                return self.trainer.reap(None)
            finally:
                if self.trainer.poll() is None:
                    self._stop("supervisor exiting")

    def _tee(self, log) -> None:
        """Copy the trainer's output, until its end, into the log, onto stdout, and to the progress echo."""
        output = self.trainer.popen.stdout
        if output is None:  # an explicit check: `python -O` drops asserts
            raise RuntimeError("the trainer was started without a pipe for its output")
        for chunk in iter(lambda: output.read1(65536), b""):
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
            if self.progress is not None:
                self.progress.feed(chunk)


# The parser's description: a constant, since `python -OO` drops the docstring.
SUMMARY = "Record one training command as one evidence directory, all or nothing."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--run-dir", required=True, type=folder_path,
                        help="the run's directory: made from the work directory in one rename once complete")
    parser.add_argument("--work-dir", required=True, type=work_folder_path,
                        help="where the command writes while it runs")
    parser.add_argument("--attic", required=True, type=folder_path, help="where failed or stale attempts are kept")
    parser.add_argument("--state-dir", type=optional_folder_path, default=None,
                        help="move a completed run's learning state here (DIR/NAME/...), keeping a policy-only "
                             "checkpoints/final.pt in the run: evidence stays small, a resume can still use it")
    parser.add_argument("--resolved-json", default="{}", help="the run's resolved configuration (JSON object)")
    parser.add_argument("--timeout", type=float, required=True, help="wall-clock limit in seconds")
    parser.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                        help="set for the command only (repeatable)")
    parser.add_argument("--progress-every", type=int, default=0, metavar="N",
                        help="a progress line on stderr every N iterations (default 0: every tenth of the run)")
    parser.add_argument("--progress-every-s", type=float, default=60.0, metavar="S",
                        help="... or every S seconds, whichever comes first (default 60)")
    parser.add_argument("--machine-lock", action="store_true",
                        help="hold this user's machine-wide training lock for the whole run; refuse at once, naming "
                             "the holder, when another run holds it (sacscale.pipeline.machine_lock)")
    parser.add_argument("--log", type=Path, default=None,
                        help="the run's log: this process's whole output (the command's too), opened only once the "
                             "run's locks are held, so that a second record-run of the run, refused, leaves it as "
                             "it is (default: stdout as given)")
    parser.add_argument("cmd", nargs=argparse.REMAINDER, help="-- then the command")


def main(argv: list[str] | None = None) -> int:  # the script's entry; `sacscale record-run` calls run()
    parser = UsageParser(prog="run_training.py", description=SUMMARY, allow_abbrev=False)
    add_arguments(parser)
    try:
        return run(parser.parse_args(argv), parser)
    except (KeyboardInterrupt, Interrupted) as stop:  # raised by run() once the attempt is kept
        return ended_by_stop(PREFIX, stop, until_exit=argv is None)


def run(args: argparse.Namespace, parser: argparse.ArgumentParser | None = None) -> int:
    def usage_error(message: str) -> int:
        if parser is not None:
            parser.error(message)
        print(f"sacscale record-run: error: {message}", file=sys.stderr)
        return 2

    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        return usage_error("no command given after --")
    if not (0 < args.timeout < float("inf")):  # NaN too: a watch that could never fire
        return usage_error(f"--timeout {args.timeout}: must be a positive, finite number of seconds")
    env, problem = env_pairs(args.env)
    if problem:
        return usage_error(problem)
    try:  # by hand as by the pipeline: planning judges a run configuration's env so
        check_run_env(env, "--env", command=cmd[0])
    except PlanError as exc:
        return usage_error(str(exc))
    if args.progress_every < 0:
        return usage_error(f"--progress-every {args.progress_every}: a number of iterations, at least 0")
    if not 0 < args.progress_every_s < float("inf"):  # NaN too: a progress line never, or at every chunk
        return usage_error(f"--progress-every-s {args.progress_every_s}: must be a positive, finite number of seconds")
    resolved, problem = resolved_json(args.resolved_json)
    if problem:
        return usage_error(problem)
    name = str(resolved.get("run", args.run_dir.name))
    with contextlib.ExitStack() as held:
        refused = _prepare(held, args, name, resolved.get("run_set"))
        if refused is not None:
            return refused
        if args.log is not None and (problem := output_to_log(args.log)):
            return _refuse(f"--log {problem} (nothing was moved or started)")
        return _run_once(args, cmd, env, resolved, name)


def _prepare(held: contextlib.ExitStack, args: argparse.Namespace, name: str, run_set: str | None) -> int | None:
    """Check the folders, take the locks, make the attic and the learning state's folder:
    whatever is refused here is refused before anything is moved or started. None when
    ready, else the exit status."""
    folders = (args.run_dir, args.work_dir, args.attic, args.state_dir)
    # before a lock file (and the folder it is made in) is written: none in another run's live folder
    problem = folders_problem(*folders) or log_problem(args.log) or live_folders_problem(*folders)
    if problem is None:
        refused = _hold_locks(held, args, name, run_set)
        if refused is not None:
            return refused
        dead_copies_removed(args.run_dir, args.attic, args.state_dir, _say)  # no live record-run of this run now
        # again under the locks, as a train looks above under its own: of two starting together, one sees the other
        problem = (live_folders_problem(*folders) or completed_leftover_problem(args.work_dir, args.run_dir)
                   or make_attic(args.attic))  # a run refused makes nothing
        if problem is None and args.state_dir is not None:
            problem = make_state_dir(args.state_dir)
    return None if problem is None else _refuse(f"{problem} (nothing was moved or started)")


def _hold_locks(held: contextlib.ExitStack, args: argparse.Namespace, name: str, run_set: str | None) -> int | None:
    """Take the run's locks, held until `held` closes, before anything is moved or started
    (a refusal loses nothing): the machine's training lock when asked for, and the run's own
    locks beside its work and run folders, since a second record-run of this run would take
    the first's live work folder for a killed attempt's and set it aside. None once held,
    else the exit status of the refusal."""
    if args.machine_lock:
        try:
            args.held_fd = held.enter_context(training_machine(name, run_set))  # its command inherits it
        except MachineBusy as exc:  # another run's: the pipeline runs it again once that one ends
            _say(f"run {name} not started: {exc}")
            return 1
        except LockError as exc:  # the setting, or what its disk refuses (full, read-only): as any output's
            return _refuse(f"run {name} not started: {exc}")
    folders = {os.path.abspath(lock_file_beside(f)): f for f in (args.run_dir, args.work_dir)}
    for _, folder in sorted(folders.items()):  # one order for every process
        try:
            held.enter_context(lock_beside(folder))
        except HeldBeside as exc:
            holder = f" ({exc.holder})" if exc.holder.startswith("pid ") else ""
            return _refuse(f"the run {args.run_dir} is being recorded by another record-run{holder}; its work "
                           "folder is live, not a stale attempt to set aside: wait for it to end (nothing was moved "
                           "or started)")
        except LockError as exc:
            return _refuse(f"the run {args.run_dir} not started: {exc}")
    return _refuse_a_trainer_there(args)


def _refuse_a_trainer_there(args: argparse.Namespace) -> int | None:
    """A `sacscale train` of its own (not under a record-run) training in the work folder or at
    the run folder's name holds that folder's trainer lock, not record-run's: its live folder is
    no attempt to set aside, nor an earlier run to supersede (its trainer would die mid-run)."""
    for folder, which, what in ((args.work_dir, "work folder", "a stale attempt"),
                                (args.run_dir, "run folder", "an earlier run")):
        real = Path(os.path.realpath(folder))
        try:
            holder = holder_beside(real, TRAINER_LOCK)
        except UntrustedLock as exc:
            return _refuse(f"the run {args.run_dir} not started: {exc}")
        if holder is not None:
            return _refuse(f"the run {args.run_dir}: a sacscale train is training in its {which} {folder} "
                           f"({holder} holds {lock_file_beside(real, TRAINER_LOCK)}); not {what} to set aside: "
                           "wait for it to end (nothing was moved or started)")
        if problem := live_run_inside(args.run_dir, folder, which, what):  # a live run deeper down
            return _refuse(problem)
    return None


def _another_trainer_in(work: Path) -> str | None:
    """Who holds the work folder's trainer lock once this attempt's command has ended: a
    `sacscale train` of its own that took the folder between the check before the start and
    this record-run's trainer (refused, then, by that lock). Its live folder is not this
    attempt's to record or set aside."""
    try:
        return holder_beside(Path(os.path.realpath(work)), TRAINER_LOCK)
    except UntrustedLock as exc:
        return f"a lock file of another user's ({exc})"


def _refuse(message: str) -> int:
    print(f"sacscale record-run: {message}", file=sys.stderr)
    return 2


def _run_once(args: argparse.Namespace, cmd: list[str], env: dict[str, str], resolved: dict, name: str) -> int:
    """The run, after moving aside what an earlier attempt left; a failure is not retried."""
    if problem := leftovers_set_aside(args.run_dir, args.work_dir, args.attic, _say):
        print(f"sacscale record-run: {problem}", file=sys.stderr)
        return 1  # the file system refused, not the input
    code, status, where, cause, stopped_by = _attempt(args, cmd, env, resolved)
    if status == "completed":
        return 0
    if status in ("not started", "not in place"):
        return code
    why = f", but {cause}" if cause and code == 0 else ""
    _say(f"run {name} {status} (exit status {code}{why}); nothing was marked done. {where}")
    if stopped_by is not None:  # the attempt kept: ends as every stopped command does (cli's line, 128+N)
        raise KeyboardInterrupt() if stopped_by == signal.SIGINT else Interrupted(stopped_by)
    return code if code and code > 0 else 1


def run_status(timed_out: bool, interrupted_by, exit_status, log_error, wrote_events: bool) -> str:
    """run.json's `status` from the other fields the wrapper records beside it (`timed_out`,
    `interrupted_by`, `exit_status`, `error`) and whether rank 0 wrote an event file."""
    if timed_out:
        return "timed_out"
    if interrupted_by:
        return "interrupted"
    if exit_status != 0 or log_error:
        return "failed"  # a run whose log could not be kept is not complete evidence
    return "completed" if wrote_events else "failed"


def _made_ready(work: Path, args: argparse.Namespace, record: dict) -> str | None:
    """A completed run's event files compressed and its learning state set aside, before its
    rename; where either fails, the record says failed and the cause is returned."""
    try:
        record["events_compressed"] = compress_rank_events(work)
    except (OSError, EventFileError) as exc:
        record["status"] = "failed"
        why = error_text(exc) if isinstance(exc, OSError) else exc
        _say(f"cannot compress the event files of {work}: {why}")
        return f"its event files could not be compressed ({why})"
    if args.state_dir is None:
        return None
    try:
        record["learning_state"] = move_learning_state(work, args.state_dir / args.run_dir.name)
    except (OSError, ValueError) as exc:
        record["status"] = "failed"
        why = error_text(exc) if isinstance(exc, OSError) else exc  # a path too long is thousands of characters
        _say(f"cannot set the learning state of {work} aside: {why}")
        return f"its learning state could not be set aside ({why})"
    return None


# another train's live folder: nothing of this attempt's was written beside its log
_LEFT_TO_TRAIN = "Its log is in {}, left to the train that holds it"


def _attempt(args: argparse.Namespace, cmd: list[str], env: dict[str, str], resolved: dict):
    """Run the command once into the work directory; rename it to the run directory when
    complete, else set it aside. Returns (exit status, status, where the attempt was kept (a
    sentence), what failed when the command itself did not (None, or a phrase after "but"), the stop)."""
    run_dir, work = args.run_dir, args.work_dir
    try:
        work.mkdir(parents=True)
    except OSError as exc:
        _say(f"cannot create {work}: {exc.strerror or exc}; the run did not start")
        return 1, "not started", None, None, None

    t0, started = _now()
    label = f"training {resolved.get('run', run_dir.name)}"
    # our trainer's phases (collecting, then learning) are named; another command's are unknown
    ours = len(cmd) > 1 and Path(cmd[0]).name == "sacscale" and cmd[1] == "train"
    progress = ProgressEcho(label, args.progress_every, args.progress_every_s, phases=ours)
    supervisor = Supervisor(cmd, env, work / "train.log", args.timeout, progress, getattr(args, "held_fd", None))
    code = supervisor.run()
    t1, ended = _now()

    events = rank0_event_files(work)  # ours: tb/rank0/; the reference trainer's: its own layout
    status = run_status(supervisor.timed_out, supervisor.interrupted, code, supervisor.log_error, bool(events))
    cause = None  # why a command that exited 0 still failed
    if supervisor.log_error:
        cause = f"its output could not be logged ({supervisor.log_error})"
    elif status == "failed" and code == 0:
        cause = f"it wrote no rank-0 event file under {work}"
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
    if status == "completed" and (failure := _made_ready(work, args, record)):
        status, cause = record["status"], failure
    if status != "completed" and (holder := _another_trainer_in(work)):
        _say(f"{work}: a sacscale train outside this record-run took it meanwhile ({holder}); left to it as "
             "it is: no run.json written there, nothing moved")
        took = f"another sacscale train took its work folder ({holder})"
        return code, status, _LEFT_TO_TRAIN.format(work), took, supervisor.stopped_by
    if status != "completed" and (inside := taken_meanwhile(work)):  # not moved from under a live run
        _say(f"{work}: {inside[0]}; left to it as it is: no run.json written there, nothing moved")
        return code, status, _LEFT_TO_TRAIN.format(work), inside[1], supervisor.stopped_by
    try:
        write_json(work / "run.json", record)
    except OSError as exc:
        status = "failed"
        cause = cause or f"its run.json could not be written ({exc.strerror or exc})"
        _say(f"cannot write {work / 'run.json'}: {exc.strerror or exc}")
    if status == "completed":
        try:
            move(work, run_dir)  # a rename, else (another mount) a copy made whole beside the run folder first
        except SourceLeft as exc:
            _say(f"{run_dir} is in place, but what is left of {work} cannot be removed ({error_text(exc)}); it is "
                 "a copy: remove it yourself")
        except OSError as exc:
            line, code = not_in_place(resolved.get("run", run_dir.name), work, run_dir, exc)
            _say(line)
            # 1, not 2 (a usage error's), unless another user's entry came at its name: the input was right and
            # the run completed; only its move into place failed, so the rule fails as for a failed run
            return code, "not in place", work, None, supervisor.stopped_by
        _say(f"{run_dir} completed in {t1 - t0:.1f} s")
        return 0, status, run_dir, None, supervisor.stopped_by
    return code, status, _set_aside(work, args.attic, status), cause, supervisor.stopped_by
