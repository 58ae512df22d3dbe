"""The lock of a run set, held by every command that writes into it: `manifest` (its scope
step's moves, the listing and hashing, MANIFEST.sha256 and manifest.json) and `verify` whose
--output is the set's verify.json.

Two of them at once on one set left it mixed: one manifest moved a policy out while the other
listed and hashed it, and each wrote its own MANIFEST.sha256 and manifest.json, so the set kept
the manifest of one and the counts of the other (both said they succeeded, verify failed); a
verify reading a set while a manifest rewrote it recorded a verdict of a set that never was.
The lock is `sacscale.locks.lock_beside` (`.<set>.lock` beside the set, outside its evidence,
removed on release) and, as for a report's folder and a recorded run, not waited for: the
second command is refused at once, naming the holder, and the user runs it again once the
first has finished (a manifest run after the other is the one that stands)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from sacscale.commands import BadInput
from sacscale.locks import HeldBeside, LockError, lock_beside


@contextlib.contextmanager
def holding_the_set(root: str | os.PathLike, undone: str) -> Iterator[None]:
    """Hold the lock of the run set `root` (every spelling of it, a link or `..`, one lock);
    BadInput, naming the holder, where another command holds it. `undone` says what this
    command left as it was (`nothing was moved or written`). A root that is no folder is
    not locked: the command names that problem itself, and nothing is made for it."""
    folder = Path(os.path.realpath(root))
    with contextlib.ExitStack() as held:
        if folder.is_dir():
            try:
                held.enter_context(lock_beside(folder))
            except HeldBeside as exc:
                raise BadInput(f"{root}: another sacscale manifest or verify is writing into this run set "
                               f"({exc.holder} holds {exc.lock}); {undone}: run this one once it has "
                               "finished") from None
            except LockError as exc:
                raise BadInput(f"{root}: cannot lock the run set to write into it ({exc}); {undone}") from None
        yield
