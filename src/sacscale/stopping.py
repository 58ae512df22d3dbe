"""Stop requests by signal (SIGTERM, SIGINT, SIGHUP), acted on at known points.

The handler only records the first signal (and calls `on_first`, e.g. to arm a
watchdog); it never raises. An exception raised from a handler lands wherever the main
thread happens to be, including between a library's lock acquisition and the `with`
block that would release it (TensorBoard's writer, tqdm): the cleanup then deadlocks on
that lock. Instead the training loop and every blocking wait (they poll every 0.2 s)
call `check()`, which raises `Interrupted` there, so the unwinding always starts from a
state our own `finally` blocks can clean up. Later signals are ignored, so they cannot
cut the cleanup short (SIGKILL still ends the process).

The other commands have no such points: `raised_as_interrupted` (sacscale.cli) makes
SIGTERM and SIGHUP raise wherever they land, as Ctrl-C already does there, so that their
`finally` blocks remove what they had half written. Where such a stop must not land (the
start of a child that is ours to end: a stop inside subprocess.Popen after its fork leaves
the child running, unowned), `stops_held` raises it as its block ends instead.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)

_requested: int | None = None


class Interrupted(BaseException):
    """SIGTERM (or SIGINT) received by a job's own process: unwind so that `finally`
    blocks stop the collectors, free shared memory and close the event files. A
    BaseException, like KeyboardInterrupt, so that no `except Exception` swallows it."""

    def __init__(self, signum: int):
        self.signum = signum
        super().__init__(f"interrupted by {signal.Signals(signum).name}")


def install(on_first: Callable[[int], None] | None = None) -> dict | None:
    """Record stop signals in this process (main thread only). Returns the handlers to
    give to `restore` (None off the main thread, where nothing is installed)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    previous = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}

    def handler(signum, frame):
        global _requested
        if _requested is not None:
            return
        _requested = signum
        if on_first is not None:
            on_first(signum)

    for signum in STOP_SIGNALS:
        signal.signal(signum, handler)
    return previous


def restore(previous: dict | None) -> None:
    global _requested
    for signum, handler in (previous or {}).items():
        signal.signal(signum, handler)
    _requested = None


def requested() -> int | None:
    """The first stop signal received, or None."""
    return _requested


def stop_raised() -> BaseException | None:
    """The stop `raised_as_interrupted`'s handlers raised in this command, if any."""
    return _last_raised


def check() -> None:
    """Raise Interrupted if a stop signal has arrived; under `raised_as_interrupted`, raise
    again the stop its handler raised where C code cleared it unseen (a Cython module's
    import registering its types: no hook hears of it). Long loops call it each turn."""
    if _last_raised is not None:
        _raise_again(_last_raised)
    if _requested is not None:
        raise Interrupted(_requested)


# the signals that end a command that has no stop points of its own: a batch system's or
# Snakemake's cancel (SIGTERM), a closed terminal (SIGHUP); SIGINT raises KeyboardInterrupt already
ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
# a stop Python swallowed (raised inside a weakref callback or a finalizer) is sent again this
# much later
SEND_AGAIN_AFTER_S = 0.01


@contextmanager
def raised_as_interrupted() -> Iterator[None]:
    """For a command without stop points (everything but the trainers and the run wrapper,
    which supervise children and install their own handlers): SIGTERM and SIGHUP raise
    Interrupted wherever the main thread is, as Ctrl-C raises KeyboardInterrupt, so the
    `finally` blocks that remove half-written temporary files and stop encoders run; the
    default action ended the process without them. Later ones, a Ctrl-C too, are ignored, so
    they cannot cut that cleanup short or change how the command ends. A signal ignored when
    the command started (`nohup`) stays ignored. Ctrl-C still raises KeyboardInterrupt,
    through a handler of ours so that `stops_held` holds it too. A stop raised where Python
    cannot raise (a weakref callback, a finalizer: Python swallows what is raised there) is
    sent again, to be raised at the next point that can; one that a library turned into an
    error of its own, or the command into a return, leaves the block as the stop. Off the
    main thread (a test calling the CLI from a thread) nothing changes."""
    global _last_raised, _reraised
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    stops = _RaisedStops()
    try:
        yield
        if _last_raised is not None:  # the command turned the stop into a return of its own
            _raise_again(_last_raised)
    except BaseException as exc:
        if _last_raised is None or exc is _last_raised:
            raise
        # a library turned the stop into an error of its own (ctypes: "argument 1:
        # Interrupted: ..."), or cleanup failed on the way out: the command was stopped
        _raise_again(_last_raised, exc)
    finally:
        stops.restore()
        _last_raised = _reraised = None


class _RaisedStops:
    """raised_as_interrupted's handlers and unraisable hook, installed while it lasts."""

    def __init__(self):
        self.in_hook = False  # inside send_again: a stop raised there would be swallowed as well
        self.resent: BaseException | None = None  # the stop the signal send_soon sends stands for
        self.timer: threading.Timer | None = None
        self.previous = {signum: signal.getsignal(signum) for signum in (*ENDING_SIGNALS, signal.SIGINT)}
        for signum, before in self.previous.items():
            if signum in ENDING_SIGNALS and before is not signal.SIG_IGN:
                signal.signal(signum, self.handler)
            elif signum == signal.SIGINT and before is signal.default_int_handler:
                signal.signal(signum, self.interrupt)
        self.previous_hook, sys.unraisablehook = sys.unraisablehook, self.send_again

    def restore(self) -> None:
        if self.timer is not None:  # its signal, if sent, meets our handler, not the default action
            self.timer.cancel()
            self.timer.join()
        sys.unraisablehook = self.previous_hook
        for signum, before in self.previous.items():
            signal.signal(signum, before if before is not None else signal.SIG_DFL)

    def handler(self, signum, frame) -> None:
        self.stop(Interrupted(signum))

    def interrupt(self, signum, frame) -> None:  # Python's own Ctrl-C, held where stops are held
        self.stop(KeyboardInterrupt())

    def ignore_later(self) -> None:
        """The first stop is the one the command ends by: a later one (a Ctrl-C after a
        SIGTERM too) cannot cut its cleanup short or change how it ends."""
        for signum in self.previous:
            signal.signal(signum, signal.SIG_IGN)

    def stop(self, exc: BaseException) -> None:
        self.ignore_later()
        if self.resent is not None:  # send_soon's signal: the stop it stands for
            exc, self.resent = self.resent, None
            if exc is _reraised:  # raised again meanwhile (check(), the block's end): unwinding
                return
        if self.in_hook:
            self.send_soon(exc)
        else:
            _raise_or_hold(exc)

    def send_soon(self, exc: BaseException) -> None:
        # from another thread, a moment later: this one has left the hook by then (a
        # signal sent from here would be handled before the hook returns)
        signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
        signal.signal(signum, self.handler if isinstance(exc, Interrupted) else self.interrupt)
        self.resent = exc
        self.timer = threading.Timer(SEND_AGAIN_AFTER_S, os.kill, (os.getpid(), signum))
        self.timer.daemon = True
        self.timer.start()

    def send_again(self, unraisable) -> None:
        if unraisable.exc_value is None or unraisable.exc_value is not _last_raised:
            self.previous_hook(unraisable)
            return
        self.in_hook = True
        try:
            self.send_soon(unraisable.exc_value)
        finally:
            self.in_hook = False


# inside `stops_held`, the stop that raised_as_interrupted's handlers raise is kept here and
# raised as the block ends
_holding = False
_held: BaseException | None = None
# the stop last raised: if Python swallows it (raised inside a weakref callback or a
# finalizer), raised_as_interrupted's unraisable hook knows it for ours
_last_raised: BaseException | None = None
# the stop last raised again where it had been lost: the signal sent for it is then no news
_reraised: BaseException | None = None


def _raise_again(stop: BaseException, cause: BaseException | None = None) -> None:
    global _reraised
    _reraised = stop
    if cause is None:
        raise stop
    raise stop from cause


def _raise_or_hold(stop: BaseException) -> None:
    global _held, _last_raised
    if not _holding:
        _last_raised = stop
        raise stop
    if _held is None:
        _held = stop


@contextmanager
def stops_held() -> Iterator[None]:
    """A block that the stop raised by `raised_as_interrupted` (Interrupted, Ctrl-C's
    KeyboardInterrupt) cannot land inside: one that arrives meanwhile is raised as the block
    ends. For the start of a child that we must end before removing what it writes: a stop
    landing inside subprocess.Popen after its fork left the child running with no object to
    end it by. Where the handlers only record (the trainers'), nothing changes."""
    global _holding, _held, _last_raised
    if _holding:
        yield
        return
    _held = None  # one a Ctrl-C cut short at the end of an earlier block is no news now
    _holding = True
    try:
        yield
    finally:
        _holding = False
        held, _held = _held, None
        if held is not None:
            _last_raised = held
            raise held
