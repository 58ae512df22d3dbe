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
host's GPUs) sees another folder at the same name; the run therefore also holds a name that
every mount namespace shares (sacscale.pipeline.machine_wide, an abstract unix socket per
user and lock folder name), and is refused while a process elsewhere holds it.
"""

from __future__ import annotations

import contextlib
import re

from sacscale.lock_names import MACHINE_LOCK_NAME
from sacscale.locks import LockError, LockHeld, LockSettingError, lock_dir, private_lock
from sacscale.pipeline import machine_wide

LOCK_NAME = MACHINE_LOCK_NAME
# the one setting that moves the training lock's folder (not SACSCALE_LOCK_DIR)
VARIABLE = "SACSCALE_MACHINE_LOCK_DIR"
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
    the run that holds it (an unsafe lock folder or file raises LockError as it is)."""
    lock_dir()  # the run's own lock folder (its compile cache): a setting that cannot be one is named before it starts
    held = contextlib.ExitStack()
    try:
        held.enter_context(private_lock(LOCK_NAME, "this machine's training lock", 0.0, note=_note(run, run_set),
                                        variable=VARIABLE))
    except LockHeld as exc:
        raise MachineBusy(f"{exc}: {_BUSY}") from None
    with held:
        folder = lock_dir(VARIABLE)
        sock, holder = machine_wide.hold(str(folder))
        if holder is not None:
            who = f"pid {holder}" if holder else "a process of this user outside this PID namespace"
            raise MachineBusy(f"this machine's training lock ({folder}) is held by {who} in another mount "
                              f"namespace (a private /tmp: systemd PrivateTmp=, unshare -m, a container), where "
                              f"that name is another folder: {_BUSY}")
        if sock is not None:
            held.callback(sock.close)
        yield


_BUSY = ("another pipeline invocation is training on this machine; two runs at once would share its GPUs and CPUs "
         "and skew both sets' measurements. Run again once it has finished (completed runs stay done)")

__all__ = ["LOCK_NAME", "VARIABLE", "LockError", "LockSettingError", "MachineBusy", "lock_dir", "training_machine"]
