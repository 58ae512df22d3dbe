"""The one supervisor of child processes, and the helpers it is built from.

A child is either a command started as the leader of its own session (`start_group`: the
trainer under the pipeline's run wrapper, the reference trainer), whose signals go to its
whole process group, or a multiprocessing child that stays in our group (`SpawnedChild`:
ranks and collectors, which a signal to the job's group must reach too), whose signals go
to it alone. Either can be waited for with a deadline while a stop condition is polled
(`wait`), and ended: a first signal, a grace period, then SIGKILL, then reaped (`end`,
`end_all`). Each returns an `Ending`: how the child ended, or why the wait gave up on it.
What to say about it, which exit status to give and what to record stay with the caller.
"""

from __future__ import annotations

import ctypes
import functools
import os
import signal
import subprocess
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass

PR_SET_PDEATHSIG = 1  # prctl option, from <linux/prctl.h>
WAIT_POLL_S = 0.2  # how often a wait looks at its stop condition and its deadline
END_POLL_S = 0.05  # how often an ending looks for children that are gone or frozen


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
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as fh:  # its name may be any bytes
            stat = fh.read()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2 :][:1] in ("T", "t")


@dataclass(frozen=True)
class Ending:
    """How a child ended (`code`: its exit status, negative for the signal that killed it),
    or, with `code` None, why a wait gave up on a child still running."""

    code: int | None
    timed_out: bool = False  # the wait's deadline passed first
    stop_requested: bool = False  # the wait's stop condition held first
    killed: bool = False  # an ending had to SIGKILL it
    frozen: bool = False  # ... at once: it was stopped by a signal or a tracer, deaf to the first signal

    @property
    def by_signal(self) -> int | None:
        """The signal that killed it, if one did."""
        return -self.code if self.code is not None and self.code < 0 else None

    def describe(self) -> str:
        if self.code is not None:
            return describe_exit(self.code)
        return "did not end before its deadline" if self.timed_out else "was still running when asked to stop"


class Child(ABC):
    """One supervised child: its pid, and how to look at it, signal it and reap it. The
    subclasses say where a signal goes (its process group, or the process alone)."""

    pid: int

    @abstractmethod
    def poll(self) -> int | None:
        """Its exit status once it has ended (and is reaped), else None."""

    @abstractmethod
    def send(self, sig: int) -> None:
        """Send `sig` where this kind of child takes its signals."""

    @abstractmethod
    def reap(self, timeout_s: float | None) -> int | None:
        """Wait up to `timeout_s` (None: without limit) for it to end; its exit status."""

    def wait(self, timeout_s: float | None = None, stop: Callable[[], bool] | None = None,
             poll_s: float = WAIT_POLL_S) -> Ending:
        """Wait for it to end; give up when `stop()` holds or after `timeout_s` (None: no
        deadline), leaving it running. The exit is seen at once, the rest every `poll_s`."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            code = self.poll()
            if code is not None:
                return Ending(code)
            if stop is not None and stop():
                return Ending(None, stop_requested=True)
            pause = poll_s
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return Ending(None, timed_out=True)
                pause = min(pause, left)
            self.reap(pause)

    def end(self, first: int = signal.SIGTERM, grace_s: float = 10.0, kill_frozen: bool = False,
            reap_s: float | None = None) -> Ending:
        """End it (see `end_all`)."""
        return end_all([self], first, grace_s, kill_frozen, reap_s)[0]


class GroupChild(Child):
    """A command that leads its own session: signals go to its whole process group."""

    def __init__(self, popen: subprocess.Popen):
        self.popen = popen
        self.pid = popen.pid

    def poll(self) -> int | None:
        return self.popen.poll()

    def send(self, sig: int) -> None:
        try:
            os.killpg(self.pid, sig)
        except ProcessLookupError:  # the whole group is gone already
            pass

    def reap(self, timeout_s: float | None) -> int | None:
        try:
            return self.popen.wait(timeout_s)
        except subprocess.TimeoutExpired:
            return None


class SpawnedChild(Child):
    """A started multiprocessing child in our own process group: signals go to it alone."""

    def __init__(self, process):
        self.process = process
        self.pid = process.pid

    def poll(self) -> int | None:
        return self.process.exitcode

    def send(self, sig: int) -> None:
        try:
            os.kill(self.pid, sig)
        except ProcessLookupError:  # ended, not yet reaped
            pass

    def reap(self, timeout_s: float | None) -> int | None:
        self.process.join(timeout_s)
        return self.process.exitcode


def start_group(argv: Sequence[str], die_with: int | None = None, **popen_kwargs) -> GroupChild:
    """Start `argv` as the leader of a new session, so of its own process group: a signal
    meant for it reaches whatever it starts, and one meant for our group does not reach it.
    With `die_with`, it is sent that signal when this process dies (`die_with_parent`).
    `popen_kwargs` go to subprocess.Popen (output, environment, working directory)."""
    preexec = None if die_with is None else functools.partial(die_with_parent, die_with)
    return GroupChild(subprocess.Popen(argv, start_new_session=True, preexec_fn=preexec, **popen_kwargs))


def end_all(children: Sequence[Child], first: int = signal.SIGTERM, grace_s: float = 10.0,
            kill_frozen: bool = False, reap_s: float | None = None) -> list[Ending]:
    """Send `first` to every child still running, give them `grace_s` seconds to end, then
    SIGKILL those left, and reap every child (waiting up to `reap_s` each; None: without
    limit). With `kill_frozen`, one found stopped by a signal or a tracer is killed at once:
    it cannot act on `first`. One Ending per child, in order."""
    for child in children:
        if child.poll() is None:
            child.send(first)
    killed, frozen = set(), set()
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        running = [i for i, child in enumerate(children) if child.poll() is None]
        if not running:
            break
        for i in running:
            if kill_frozen and i not in frozen and is_stopped(children[i].pid):
                children[i].send(signal.SIGKILL)
                frozen.add(i)
        time.sleep(END_POLL_S)
    for i, child in enumerate(children):
        if child.poll() is None:
            child.send(signal.SIGKILL)
            killed.add(i)
    return [Ending(child.reap(reap_s), killed=i in killed | frozen, frozen=i in frozen)
            for i, child in enumerate(children)]
