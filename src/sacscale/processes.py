"""Process helpers shared by the supervisors of ranks and of collectors: tie a child's
life to its parent's, say how a child ended, and spot a child stopped by a signal or a
debugger (it cannot act on SIGTERM)."""

from __future__ import annotations

import ctypes
import os
import signal

PR_SET_PDEATHSIG = 1  # prctl option, from <linux/prctl.h>


def die_with_parent(sig: int) -> None:
    """Ask Linux to send `sig` to this process when its parent dies (PR_SET_PDEATHSIG),
    so no rank or collector outlives the process that supervises it, even one that was
    SIGKILLed. A no-op where prctl is not available."""
    parent = os.getppid()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the request took effect
        os.kill(os.getpid(), sig)


def describe_exit(code: int) -> str:
    """How a process ended, from `Process.exitcode` (negative: killed by a signal)."""
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = "unknown signal"
        return f"was killed by signal {-code} ({name})"
    return f"exited with code {code}"


def is_stopped(pid: int) -> bool:
    """Whether a process is stopped by a signal or a tracer (state T or t)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            stat = fh.read()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2 :][:1] in ("T", "t")
