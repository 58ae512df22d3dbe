"""One training run at a time on this machine, whichever pipeline invocation starts it.

Snakemake serialises the runs of one invocation (each run needs the one before, and the
`gpu_lock` resource), but two invocations in one checkout on different run sets share no
output, so each would train at once on the same GPUs and CPUs, and both sets would record
throughput measured against the other's load without saying so. The run wrapper
(`sacscale record-run --machine-lock`, as the pipeline's run rule calls it) therefore
holds an exclusive lock for the whole run, attempts included.

A run that finds the lock held is refused at once, naming the holder, rather than made to
wait: a run lasts up to its `timeout_s` (hours on the GPU presets), so a wait would
either be unbounded or bounded by hours of a job that looks alive but does nothing.
Refused, the rule fails before anything is moved or started (completed runs stay done) and
the next invocation, once the other has finished, starts at that run.

The commands that train or measure on the machine when run by hand (`train`,
`train-reference`, `probe`, `env-bench`, `learner-bench`, `solver-study`: sacscale.cli takes
it in the command's top-level process, its ranks and collectors are covered by it) hold the
same lock file shared (`hand_run_hold`): any number of them beside each other, as users and
the tests run them, but none beside a measured run, which refuses them in one line, and a
measured run is refused while one holds it, naming the command and its pid as not a measured
run (one run by hand, or a pipeline's probe stage, which is not run under record-run). The
command record-run starts (`train` or `train-reference`) is covered by record-run's own hold:
record-run passes its locked descriptor to it open and names the number in
SACSCALE_MACHINE_LOCK_FD; the command takes the hold as its own only where that descriptor
is open and is the lock file itself (the same device and inode): one handed down by the
record-run holding it, not a number the variable merely names. No pid decides: a pid
names a process of its own PID namespace (another container's the same number here), and an
ancestor's pid also passed every command started under that ancestor; the variable alone,
with no such descriptor, counts for nothing.

The lock lives in a private lock folder (sacscale.locks: mode 0700, owner checked, no
links followed, no folder above it that another user can rename in): `sacscale-<uid>` in
/tmp, one per user and host, so it sees every invocation of this user on this host;
another user's pipelines are not seen (their evidence records their own host state). It
does not follow SACSCALE_LOCK_DIR: that setting moves the lock folder of the other locks
and of the compile cache, and is set for reasons of its own (the way out of an unsafe
/tmp folder, a cache on another disk), in one shell and not another, and two shells with
two values held two training locks and trained at once. Only SACSCALE_MACHINE_LOCK_DIR
moves it, a setting that says nothing else: the same value in every shell that trains on
this machine, or, set apart on purpose, a machine of its own (a test session's pipelines,
which may train beside each other's). Where the default folder cannot be used (another
user made /tmp/sacscale-<uid> first), the refusal names that setting.

A process with a /tmp of its own (systemd `PrivateTmp=`, `unshare -m`, a container sharing the
host's GPUs) sees another folder at the same name; both kinds of hold therefore also hold names
that every mount namespace shares (sacscale.pipeline.machine_wide, abstract unix sockets per
user and lock folder name). A measured run holds one name of an exclusive series and is
refused while a process elsewhere holds another, or holds any name of the shared series; a
command run by hand holds a name of its own in the shared series for its life and is refused
while a measured run elsewhere holds the exclusive one. Each binds before it looks, so of a
measured run and a command starting together at least one is refused. The command record-run
starts binds none: record-run's exclusive name covers it.
"""

from __future__ import annotations

import contextlib
import os
import re

from sacscale.lock_names import MACHINE_LOCK_NAME
from sacscale.locks import (SHARED_HOLDER, LockError, LockHeld, LockSettingError, lock_dir, private_lock,
                            shared_private_lock)
from sacscale.pipeline import machine_wide

LOCK_NAME = MACHINE_LOCK_NAME
# the one setting that moves the training lock's folder (not SACSCALE_LOCK_DIR)
VARIABLE = "SACSCALE_MACHINE_LOCK_DIR"
# set by record-run for its command: the number of the locked descriptor it passes on open
FD_VARIABLE = "SACSCALE_MACHINE_LOCK_FD"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


class MachineBusy(LockError):
    """Another training run of this user holds the machine."""


def _note(run: str, run_set: str | None) -> str:
    parts = [f"run {run}"] if _NAME.fullmatch(run) else []
    parts += [f"set {run_set}"] if run_set and _NAME.fullmatch(run_set) else []
    return " ".join(parts)


@contextlib.contextmanager
def training_machine(run: str, run_set: str | None = None):
    """Hold the machine for training run `run` (of `run_set`), or raise MachineBusy naming
    the run that holds it (an unsafe lock folder or file raises LockError as it is). Yields
    the locked descriptor, for the run's command to inherit (`inherited_hold`)."""
    lock_dir()  # the run's own lock folder (its compile cache): a setting that cannot be one is named before it starts
    held, fds = contextlib.ExitStack(), []
    try:
        held.enter_context(private_lock(LOCK_NAME, "this machine's training lock", 0.0, note=_note(run, run_set),
                                        variable=VARIABLE, held=fds.append, refused_by=(MachineBusy,)))
    except LockHeld as exc:
        raise MachineBusy(f"{exc}: {_SHARED if SHARED_HOLDER in str(exc) else _BUSY}") from None
    with held:
        folder = lock_dir(VARIABLE)
        sock, holder = machine_wide.hold(str(folder))
        if holder is not None:
            raise MachineBusy(f"{_elsewhere(folder, _pid(holder), holder)}: {_BUSY}")
        if sock is not None:
            held.callback(sock.close)
            _refuse_hand_run_elsewhere(folder)  # looked at once our name is bound: see hand_run_hold
        yield fds[0]


def _refuse_hand_run_elsewhere(folder) -> None:
    found = machine_wide.hand_run_holder(str(folder))
    if found is not None:
        pid, command = found
        who = f"`sacscale {command}`" if command else "a command run by hand"
        raise MachineBusy(f"{_elsewhere(folder, f'{who} ({_pid(pid)}; {SHARED_HOLDER})', pid)}: {_SHARED}")


def _pid(pid: int) -> str:
    return f"pid {pid}" if pid else "a process of this user outside this PID namespace"


def _elsewhere(folder, who: str, pid: int) -> str:
    """The lock file let us in, the machine-wide name did not: the holder `pid` (0 where hidden)
    sees another folder at that name, or, in this mount namespace, the file it holds was removed
    (a /tmp cleaner) before its holder made it again."""
    here = _same_mount_namespace(pid)
    if here:
        return (f"this machine's training lock ({folder}) is held by {who}, as its machine-wide name says: the lock "
                "file there was removed while held (a /tmp cleaner?), and its holder makes it again")
    return (f"this machine's training lock ({folder}) is held by {who} in another mount namespace (a private /tmp: "
            "systemd PrivateTmp=, unshare -m, a container), where that name is another folder"
            + ("" if here is False else ", or in this one with its lock file removed while held"))


def _same_mount_namespace(pid: int) -> bool | None:
    """Whether process `pid` sees this process's mounts (its /tmp); None where that cannot be told."""
    if not pid:
        return None
    try:
        return os.readlink(f"/proc/{pid}/ns/mnt") == os.readlink("/proc/self/ns/mnt")
    except OSError:
        return None


def inherited(fd: int | None) -> dict[str, str]:
    """The environment that tells a command started with `fd` (the locked descriptor
    training_machine yields, passed to it open) that this hold is its own; {} for None."""
    return {} if fd is None else {FD_VARIABLE: str(fd)}


@contextlib.contextmanager
def hand_run_hold(command: str):
    """Hold the machine shared for `sacscale COMMAND` run by hand (sacscale.cli's commands that
    train or measure; the pipeline's probe stage too): beside other such commands, never beside a measured run,
    in this mount namespace (the lock file) or another (machine_wide's names). Raises MachineBusy
    naming the run that holds it, unless this process inherited that hold (`inherited_hold`):
    the command record-run started."""
    with contextlib.ExitStack() as held:
        try:
            held.enter_context(shared_private_lock(LOCK_NAME, "this machine's training lock", f"hand {command}",
                                                   VARIABLE, refused_by=(MachineBusy,)))
        except LockHeld as exc:
            if not inherited_hold():
                raise MachineBusy(f"{exc}; {_refused(command)}") from None
        else:
            _hold_shared_name(held, command)
        yield


def _hold_shared_name(held: contextlib.ExitStack, command: str) -> None:
    """Hold a name of the machine-wide shared series until `held` closes, or raise MachineBusy
    naming the measured run that holds the exclusive one (in another mount namespace: in this
    one the lock file refused it first)."""
    folder = lock_dir(VARIABLE)
    sock, holder = machine_wide.hold_shared(str(folder), command)
    if holder is not None:
        raise MachineBusy(f"{_elsewhere(folder, _pid(holder), holder)}; {_refused(command)}")
    if sock is not None:
        held.callback(sock.close)


def _refused(command: str) -> str:
    return (f"sacscale {command} would run beside a measured run and skew its numbers: wait for it to end, or set "
            f"{VARIABLE} to a folder of its own to train beside it knowingly (nothing was started)")


def inherited_hold() -> bool:
    """Whether FD_VARIABLE names a descriptor open in this process on the lock file itself (the
    same device and inode): one handed down by the record-run holding the lock. No pid decides
    (another PID namespace's numbers mean other processes here), and the variable alone, with
    no such descriptor, is nothing."""
    value = os.environ.get(FD_VARIABLE, "")
    if not (value.isdigit() and len(value) <= 9):
        return False
    try:
        held = os.fstat(int(value))
        named = os.stat(lock_dir(VARIABLE) / LOCK_NAME, follow_symlinks=False)
    except (OSError, LockError):
        return False
    return (held.st_dev, held.st_ino) == (named.st_dev, named.st_ino)


_BUSY = ("another pipeline invocation is training on this machine; two runs at once would share its GPUs and CPUs "
         "and skew both sets' measurements. Run again once it has finished (completed runs stay done)")
_SHARED = ("a command run by hand or another pipeline invocation's probe stage is training or measuring on this "
           "machine; a run beside it would share its GPUs and CPUs and measure against its load. Run again once it "
           "has finished (completed runs stay done)")

__all__ = ["FD_VARIABLE", "LOCK_NAME", "VARIABLE", "LockError", "LockSettingError", "MachineBusy", "hand_run_hold",
           "inherited", "inherited_hold", "lock_dir", "training_machine"]
