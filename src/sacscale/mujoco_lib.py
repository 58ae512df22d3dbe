"""MuJoCo, as every sacscale module loads it: `from sacscale.mujoco_lib import mujoco`.

MuJoCo appends its warnings (an unstable simulation, a model load's notes) to
MUJOCO_LOG.TXT in the working folder, opening that name as it finds it: a link planted
there by whoever can write the folder would have our process append to the file the link
names. Importing this module turns the file log off for the whole process before anything
is simulated; the warnings still go to the console, and the simulation's own warning
counters (which solver-study reads) are untouched. Each process that loads MuJoCo,
spawned collectors included, imports it through here."""

from collections.abc import Iterator
from contextlib import contextmanager

import mujoco


def keep_log_out_of_files() -> None:
    """MuJoCo's warnings go to the console only, never to a file in the working folder."""
    config = mujoco.MjLogConfig.get()
    config.logto_file = False
    config.set()


@contextmanager
def mujoco_log_silenced() -> Iterator[None]:
    """No console lines either, for a caller that counts the warnings itself; the process's
    setting (console on, file off) is given back afterwards."""
    saved = mujoco.MjLogConfig.get()
    quiet = mujoco.MjLogConfig.get()
    quiet.logto_file = quiet.logto_console = False
    quiet.set()
    try:
        yield
    finally:
        saved.set()


def load_mjb(name: str, data: bytes | None = None) -> mujoco.MjModel:
    """A compiled model (.mjb) loaded from `data` (else from the file `name`). MuJoCo's note on
    a file it cannot read (a truncated one) goes into the ValueError, not to the console, where
    it stood above the caller's one-line refusal."""
    notes: list[str] = []
    before = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(notes.append)
    try:
        return mujoco.MjModel.from_binary_path(name, None if data is None else {name: data})
    except ValueError as exc:
        raise ValueError("; ".join([str(exc), *notes])) from None
    finally:
        mujoco.set_mju_user_warning(before)


keep_log_out_of_files()

__all__ = ["load_mjb", "mujoco", "mujoco_log_silenced"]
