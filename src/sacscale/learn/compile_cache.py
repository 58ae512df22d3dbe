"""torch.compile's code cache in a folder of this user's own.

Inductor keeps the code it generates, and loads it again by name, in TORCHINDUCTOR_CACHE_DIR,
by default `torchinductor_<user>` in the system's temporary folder, made with
`makedirs(exist_ok=True)` and used whoever owns it. Another local user who makes that folder
first (or a link there) can replace a cached module and have the next compiled run execute
their code as the runner. Unless the user set the variable, the cache goes into this user's
private lock folder (sacscale.locks.private_folder: 0700, owner checked, no link followed),
which the compile workers inherit through the environment; the precompiled headers, which
Inductor keeps in the default folder whatever the variable says, go there too.
"""

from __future__ import annotations

import os

from sacscale.locks import private_folder

VARIABLE = "TORCHINDUCTOR_CACHE_DIR"


def use_private_cache() -> None:
    """Point Inductor's cache at this user's private folder, before the first compile; a
    folder the user named is theirs to choose. An unsafe lock folder raises LockError."""
    from torch._inductor.runtime.cache_dir_utils import default_cache_dir

    # torch exports its default into the environment when it first asks for the folder
    # (importing parts of it does): that one is not a choice of the user's
    given = os.environ.get(VARIABLE)
    if not given or os.path.abspath(given) == os.path.abspath(default_cache_dir()):
        os.environ[VARIABLE] = str(private_folder("torchinductor"))
    _headers_beside(os.environ[VARIABLE])


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
