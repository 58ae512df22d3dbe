"""torch.compile's code cache in a folder of this user's own.

Inductor keeps the code it generates, and loads it again by name, in TORCHINDUCTOR_CACHE_DIR,
by default `torchinductor_<user>` in the system's temporary folder, made with
`makedirs(exist_ok=True)` and used whoever owns it. Another local user who makes that folder
first (or a link there) can replace a cached module and have the next compiled run execute
their code as the runner. Unless the user set the variable, the cache goes into this user's
private lock folder (sacscale.locks.private_folder: 0700, owner checked, no link followed),
which the compile workers inherit through the environment; the precompiled headers, which
Inductor keeps in the default folder whatever the variable says, go there too. A folder the
user named (inherited, not configured per run, which planning judges) is refused where another
user could put code in it (the folder or one above it is theirs or open to them, or it is not
made yet in a folder every user makes entries in, it is no folder, or another user's link is
on the way as the kernel walks the name) or where each process resolves it to its own folder
(through /proc). Every `sacscale` command judges it first, as it starts, before torch's import
makes the folder (sacscale.pipeline.inherited_caches); this check holds where no command
started the process (a rank, a caller in the same process).
"""

from __future__ import annotations

import getpass
import os
import re
import stat
import tempfile
from pathlib import Path

from sacscale.atomic import file_kind, refuse_foreign_links, swappable_by_others
from sacscale.lock_folder import per_process_entry
from sacscale.locks import LockSettingError, private_folder

VARIABLE = "TORCHINDUCTOR_CACHE_DIR"


def use_private_cache() -> None:
    """Point Inductor's cache at this user's private folder, before the first compile; a
    folder the user named is theirs to choose, if no one else could put code there (else
    LockSettingError). An unsafe lock folder raises LockError."""
    given = _given_cache()
    if given is None:
        os.environ[VARIABLE] = str(private_folder("torchinductor"))
    else:
        check_given_cache()
    _headers_beside(os.environ[VARIABLE])


def _given_cache() -> str | None:
    """The folder the user named, or None."""
    # torch exports its default into the environment when it first asks for the folder
    # (importing parts of it does): that one is not a choice of the user's
    given = os.environ.get(VARIABLE)
    if not given or os.path.abspath(given) == _torch_default():
        return None
    return given


def _torch_default() -> str:
    """torch's default folder, worked out as torch does: importing torch's own function
    makes the folder the variable names, before it could be judged."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = f"uid_{os.getuid()}"
    return os.path.join(tempfile.gettempdir(), "torchinductor_" + re.sub(r'[\\/:*?"<>|]', "_", user))


def check_given_cache() -> None:
    """LockSettingError where the inherited TORCHINDUCTOR_CACHE_DIR names a folder another
    user could put compiled code in, or one each process resolves to its own."""
    given = _given_cache()
    if not given:
        return
    walked = os.path.join(os.getcwd(), given)  # as the kernel walks it: links followed, `..` kept
    if entry := per_process_entry(walked):
        at = "" if entry == "/proc" else f" (by {entry})"
        raise LockSettingError(f"{VARIABLE}={given!r} leads through /proc{at}, whose names each process resolves to "
                               "its own folders: a different cache in each process; give the folder's own absolute "
                               "name, or unset it (a private folder in the lock folder is then used)")
    # torch reads the name through os.path.abspath (`..` removed as text); the kernel, and
    # other versions of torch, walk it as written: both judged
    problem = next(filter(None, map(_cache_problem, dict.fromkeys((walked, os.path.abspath(given))))), None)
    if problem:
        raise LockSettingError(f"{VARIABLE}={given!r}: {problem}; torch.compile loads compiled kernels from it, so "
                               "that user's code would run here: name a folder of your own, or unset it (a private "
                               "folder in the lock folder is then used)")


def _cache_problem(walked: str) -> str | None:
    try:
        refuse_foreign_links(walked, reading=True)
    except OSError as exc:
        return f"is reached through {exc.filename}, {exc.strerror.split(';')[0]}"
    path = os.path.realpath(walked)  # no other user's link on the way: where the kernel arrives
    there = next(f for f in (path, *(str(p) for p in Path(path).parents)) if os.path.exists(f))
    try:
        found = swappable_by_others(there)
        st = os.stat(there)
    except OSError as exc:
        return f"cannot be looked at ({exc.strerror})"
    if there == path and not stat.S_ISDIR(st.st_mode):
        return f"is {file_kind(path)}, not a folder"
    if found:
        folder, why = found
        if folder is not None:
            return f"is inside {folder}, which {why}"
        return why if there == path else f"is to be made in {there}, which {why}"
    if st.st_uid not in (os.getuid(), 0):
        return f"is {'' if there == path else 'to be made in '}{there}, which belongs to uid {st.st_uid}, another user"
    if there != path and stat.S_IMODE(st.st_mode) & 0o002:
        return f"is not there yet, and {there} lets every user make entries in it: another could make it first"
    return None


def _headers_beside(cache: str) -> None:
    """Inductor's precompiled C++ headers go to the default folder whatever the variable
    says (a path fixed when its codecache is imported), and are compiled into every CPU
    kernel: they are moved into the chosen cache too."""
    from torch._inductor import codecache

    if hasattr(codecache, "_HEADER_DIR"):
        codecache._HEADER_DIR = os.path.join(cache, "precompiled_headers")
        codecache._HEADER_LOCK_DIR = os.path.join(codecache._HEADER_DIR, "locks")


def compile_privately(fn, **options):
    """torch.compile(fn, **options) with the cache in this user's own folder."""
    import torch

    use_private_cache()
    return torch.compile(fn, **options)
