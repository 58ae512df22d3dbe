"""`sacscale train`: every TrainConfig field is a flag (`--num-envs 2048`, `--no-compile`)."""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import sys
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path

from sacscale import checks
from sacscale.learn.compile_cache import check_given_cache
from sacscale.locks import (
    LOCK,
    RECORDED_IN_VARIABLE,
    TRAINER_LOCK,
    HeldBeside,
    LockError,
    LockSettingError,
    UntrustedLock,
    lock_beside,
    lock_dir,
    lock_file_beside,
)
from sacscale.pipeline.held_locks import held_at_or_above
from sacscale.parallel.pools import PoolError, resolve_learner_cpus, resolve_pools
from sacscale.train.config import ResumeRefused, TrainConfig, TrainingError, compiles_losses, sac_config
from sacscale.train.out_of_memory import is_out_of_memory
from sacscale.train.open_run_folder import refuse_open_run_folder
from sacscale.train.preflight import launcher_env
from sacscale.train.options import GIVEN, build_parser, option_names  # noqa: F401  (the CLI's interface)
from sacscale.train.options import add_arguments as add_train_arguments
from sacscale.held_names import unheld_path_problem
from sacscale.stopping import Interrupted
from sacscale.usage import say


def check_options(cfg: TrainConfig) -> None:
    """The checks of the options' values alone, a failure being a usage error (exit 2).
    run_training repeats them and then checks the machine and the file system (CUDA
    devices, the log directory, disk and shared memory): failures there exit 1. With
    --resume the run's own options are checked after they are read from its checkpoint,
    in run_training."""
    launcher_env()  # RANK, WORLD_SIZE...: bad values are a usage error, resumed or not
    _check_paths_are_text(cfg)
    if cfg.resume:
        if os.path.exists(cfg.resume) and not os.path.isdir(cfg.resume):  # a checkpoint file given for its folder
            raise TrainingError(f"--resume {cfg.resume}: a file, not a run folder (give the folder the run wrote, "
                                "its --log-dir, which holds checkpoints/)")
        try:  # what the resume reads and writes inside the run folder is judged as the folder is
            checks.check_resumed_parts(cfg.resume)
            refuse_open_run_folder(cfg.resume, "--resume")
        except checks.InputError as exc:
            raise TrainingError(str(exc)) from exc
        return
    try:
        cfg.validate()
        checks.check_sizes(cfg, sac_config(cfg))
        plan = resolve_pools(cfg.collector_cpu_ids, len(cfg.device_list()))
        resolve_learner_cpus(cfg.learner_cpu_ids, plan.pools)
        checks.check_model(cfg.model)  # a given --model file loads and is the task's (about 15 ms)
        _check_lock_dir(cfg)
        refuse_open_run_folder(cfg.log_dir, "--log-dir")
    except (PoolError, checks.InputError, LockSettingError) as exc:
        raise TrainingError(str(exc)) from exc


def _check_paths_are_text(cfg: TrainConfig) -> None:
    """A path whose name Python holds as undecodable bytes (a non-ASCII name under an ASCII
    file-system encoding: a C/POSIX locale, not coerced, with UTF-8 mode off) fails the
    run's first UTF-8 record of it (train_meta.json), after its folder is made: named here."""
    for flag, value in (("--log-dir", cfg.log_dir), ("--model", cfg.model), ("--resume", cfg.resume)):
        if value and (problem := unheld_path_problem(flag, value)):
            raise TrainingError(problem)


def _check_lock_dir(cfg: TrainConfig) -> None:
    """Compiled losses keep their cache in the lock folder (sacscale.learn.compile_cache): a
    SACSCALE_LOCK_DIR that cannot be one, or a TORCHINDUCTOR_CACHE_DIR of the user's that
    another user could put code in, is named here, not by each rank once it compiles."""
    if compiles_losses(cfg) and cfg.device_list()[0] != "cpu":
        lock_dir()
        check_given_cache()


class RunFolderHeld(TrainingError):
    """The run folder is another command's for now."""


class RunFolderUnmade(TrainingError):
    """Nothing can be made where the run folder goes: the file system refuses it (exit 1)."""


@contextlib.contextmanager
def holding_run_folder(cfg: TrainConfig) -> Iterator[None]:
    """The run folder, --resume's or a new run's --log-dir, is this run's until it ends (its
    trainer's lock, `.<name>.trainer-lock` beside it, is removed on the way out, a failure or
    a stop signal included): two runs in one folder, resumed or new, would write one
    train_meta.json, one checkpoints/ and one tb/rank0/. Under a launcher only rank 0 holds
    it (the other ranks share its folder). It is not record-run's lock of the folder
    (`.<name>.lock`): the trainer record-run starts takes its own freely, and any second
    trainer of the folder, under that record-run or not, is refused by the kernel's lock;
    a folder whose record-run lock is held is refused, but for the work folder record-run
    names to the trainer it starts (_refuse_a_record_run_there).
    No pid a lock file names decides anything: it may be another PID namespace's."""
    flag, given = ("--resume", cfg.resume) if cfg.resume else ("--log-dir", cfg.log_dir)
    folder = Path(os.path.realpath(given))
    another_rank = launcher_env()[0] and int(os.environ["RANK"]) != 0
    if another_rank or (cfg.resume and not folder.is_dir()):
        yield  # a resume of no folder: its own checks name it, and nothing is made for a lock
        return
    if not cfg.resume:
        try:  # a run folder being resumed above it: refused before a folder or lock is made there
            checks.refuse_inside_a_held_folder(given)
        except checks.InputError as exc:
            raise RunFolderHeld(str(exc)) from None
        try:  # a folder where nothing can be made (/proc): the file system's refusal, before a lock is tried
            checks.check_writable(given)
        except checks.InputError as exc:
            raise RunFolderUnmade(str(exc)) from None
    _refuse_a_record_run_there(flag, given, folder)  # before a lock (and its folder) is made; again under it
    with contextlib.ExitStack() as held:
        try:
            held.enter_context(lock_beside(folder, TRAINER_LOCK))
        except HeldBeside as exc:
            raise RunFolderHeld(f"{flag} {given}: another sacscale train is training in this run folder "
                                f"({exc.holder} holds {exc.lock}); nothing was started: {_WAY_OUT[flag]}") from None
        except UntrustedLock as exc:
            raise RunFolderHeld(f"{flag} {given}: cannot hold the run folder for this sitting ({exc}); "
                                "nothing was started") from None
        except LockError as exc:  # the file system refused the lock file: exit 1, as for the folder itself
            raise RunFolderUnmade(f"{flag} {given}: cannot hold the run folder for this sitting{_disk_full(exc)} "
                                  f"({exc}); nothing was started") from None
        _refuse_a_record_run_there(flag, given, folder)
        yield


def _refuse_a_record_run_there(flag: str, given, folder: Path) -> None:
    """A record-run holds its lock (`.<name>.lock`) beside its run folder and its work folder:
    a train there would be set aside as a stale attempt, or would take the run folder's name
    from the run it records. Looked at under this trainer's own lock, which record-run looks
    at under its own: of two starting together, one sees the other. Not the record-run that
    started this train, in the work folder it names. A folder above this one is looked at too
    (record-run sets its run folder aside, or renames its work folder, with a train inside)."""
    try:
        held = held_at_or_above(folder, (LOCK,), skip=os.environ.get(RECORDED_IN_VARIABLE))
    except UntrustedLock as exc:
        raise RunFolderHeld(f"{flag} {given}: cannot hold the run folder for this sitting ({exc}); "
                            "nothing was started") from None
    if held is None:
        return
    if held.lock == lock_file_beside(folder):
        raise RunFolderHeld(f"{flag} {given}: a sacscale record-run is recording a run in this folder ({held.holder} "
                            f"holds {held.lock}); nothing was started: {_WAY_OUT[flag]}")
    raise RunFolderHeld(f"{flag} {given}: inside {held.beside}, where {held.doing} ({held.said()}); nothing "
                        "was started: choose a directory outside it")


def _disk_full(exc: BaseException) -> str:
    """" (disk full)" where `exc`, or the OSError it was raised from, is a full disk or quota."""
    cause = exc if isinstance(exc, OSError) else exc.__cause__ or exc.__context__
    return " (disk full)" if isinstance(cause, OSError) and cause.errno in (errno.ENOSPC, errno.EDQUOT) else ""


_WAY_OUT = {"--resume": "resume it once that one has ended", "--log-dir": "choose a new directory"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The trainer's options, the parse noting which the command line gave (a resume judges
    each given flag against the run, one equal to its default too)."""
    add_train_arguments(parser, note_given=True)


def run(args: argparse.Namespace) -> int:
    """0: completed; 1: failed (the message names the cause); 2: a usage error (a bad option
    value, a run folder another command is training in, settings too large for the memory
    at hand, or a --resume checkpoint or run folder refused before the run starts); 128+N:
    stopped by signal N."""
    given = frozenset(getattr(args, GIVEN, frozenset()))
    cfg = TrainConfig(**{f.name: getattr(args, f.name) for f in fields(TrainConfig)})
    try:
        check_options(cfg)
        with holding_run_folder(cfg):
            return _train(cfg, given)
    except RunFolderUnmade as exc:
        say(f"sacscale train: error: {exc}", file=sys.stderr)
        return 1
    except TrainingError as exc:
        say(f"sacscale train: error: {exc}", file=sys.stderr)
        return 2


def _train(cfg: TrainConfig, given: frozenset) -> int:
    # torch and TensorBoard load here, after the option checks: a refusal answers without them
    from sacscale.train.job import OutOfMemory, run_training

    try:
        run_training(cfg, given)
    # bad input: settings too large for this machine (named as the run trained with them, a
    # resume's included), or a --resume checkpoint or run folder refused before the run starts
    except (OutOfMemory, ResumeRefused) as exc:
        say(f"sacscale train: error: {exc}", file=sys.stderr)
        return 2
    except (TrainingError, RuntimeError, ValueError, MemoryError) as exc:
        if is_out_of_memory(exc):  # before a resume's settings were read: this command's would mislead
            say(f"sacscale train: error: out of memory reading --resume {cfg.resume}: {exc}", file=sys.stderr)
            return 2
        say(f"sacscale train: error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:  # e.g. the disk filled up during the run (event files, checkpoints)
        full = _disk_full(exc)
        where = f" {exc.filename}" if exc.filename else ""
        say(f"sacscale train: error: writing under --log-dir {cfg.log_dir} failed{full}:{where} "
            f"{exc.strerror or exc}", file=sys.stderr)
        return 1
    except Interrupted as exc:
        say(f"sacscale train: {exc}; stopped (event files so far are kept)", file=sys.stderr)
        return 128 + exc.signum
    except KeyboardInterrupt:
        print("sacscale train: interrupted by SIGINT; stopped (event files so far are kept)", file=sys.stderr)
        return 130
    return 0
