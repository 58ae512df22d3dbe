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

import ctypes
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
    """Record stop signals in this process (main thread only). A signal ignored when the
    process started stays ignored (`nohup`'s SIGHUP, a background job's SIGINT): what was
    started to outlive its terminal goes on. Returns the handlers to give to `restore`
    (None off the main thread, where nothing is installed)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    previous = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS
                if signal.getsignal(signum) is not signal.SIG_IGN}

    def handler(signum, frame):
        global _requested
        if _requested is not None:
            return
        _requested = signum
        if on_first is not None:
            on_first(signum)

    for signum in previous:
        signal.signal(signum, handler)
    return previous


def supervised_stop_signals() -> tuple[int, ...]:
    """The stop signals a supervisor of children (the run wrapper) handles: SIGTERM, SIGINT
    and SIGHUP (a closed terminal), less a SIGHUP ignored when the process started (`nohup`):
    what was started to outlive its terminal goes on."""
    hangup_ignored = signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    return tuple(signum for signum in STOP_SIGNALS if not (signum == signal.SIGHUP and hangup_ignored))


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
def raised_as_interrupted(until_exit: bool = False) -> Iterator[None]:
    """For a command without stop points (everything but the trainers and the run wrapper,
    which supervise children and install their own handlers): SIGTERM and SIGHUP raise
    Interrupted wherever the main thread is, as Ctrl-C raises KeyboardInterrupt, so the
    `finally` blocks that remove half-written temporary files and stop encoders run; the
    default action ended the process without them. Later ones, a Ctrl-C too, are ignored, so
    they cannot cut that cleanup short or change how the command ends; the stop raised is the
    one that arrived first, even where a later one was pending beside it. With `until_exit`
    (the process's own entry point) they stay ignored once a stop ended the block, until the
    process has exited by the first one. A signal ignored when the command started (`nohup`)
    stays ignored. Ctrl-C still raises KeyboardInterrupt, through a handler of ours so that
    `stops_held` holds it too. A stop raised where Python cannot raise (a weakref callback, a
    finalizer: Python swallows what is raised there) is sent again, to be raised at the next
    point that can; one that a library turned into an error of its own, or the command into a
    return, leaves the block as the stop. Off the main thread (a test calling the CLI from a
    thread) nothing changes."""
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
        stops.restore(keep_ignored=until_exit and stops.stopping)
        _last_raised = _reraised = None


def ignore_stops_until_exit() -> None:
    """After the stop a process ends by: SIGTERM, SIGHUP and SIGINT ignored from now on, so
    one arriving while the interpreter shuts down (torch, MuJoCo and threads take up to a
    second) cannot end it by its own signal instead; SIGKILL still ends it. Only for the
    process's own entry point: a caller in the same process (a test) keeps its handlers."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)
    if not getattr(sys.unraisablehook, "drops_race_notes", False):
        sys.unraisablehook = _without_race_notes(sys.unraisablehook)


def ended_by_stop(program: str, stop: BaseException, until_exit: bool) -> int:
    """How a command stopped by `stop` (a Ctrl-C's KeyboardInterrupt, a SIGTERM's or SIGHUP's
    Interrupted) ends: one line, `PROGRAM: interrupted (SIGTERM)`, then the status a shell
    and Snakemake read as that signal's: 128+N, or killed by SIGINT for a Ctrl-C. With
    `until_exit` (the process's own entry point) later stops are ignored from here on."""
    if until_exit:
        ignore_stops_until_exit()
    signum = stop.signum if isinstance(stop, Interrupted) else signal.SIGINT
    print(f"{program}: interrupted ({signal.Signals(signum).name})", file=sys.stderr)
    return 128 + signum if signum != signal.SIGINT else _end_by_sigint()


def _end_by_sigint() -> int:
    """End as an unhandled Ctrl-C ends a process: killed by SIGINT, which a shell reports as
    130 and which stops a shell loop that runs us (an exit status of 130 would not). Also
    deterministic: returning 130 was seen to end by SIGINT anyway under load."""
    sys.stderr.flush()
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)
    return 130  # reached only where SIGINT is blocked


def _without_race_notes(hook):
    """A signal caught by a Python handler that is SIG_IGN by the time Python runs it is
    reported as an unraisable `OSError: Signal N ignored due to race condition`: for a stop
    signal after the first stop, that is the ignoring asked for, not news."""
    notes = {f"Signal {signum} ignored due to race condition" for signum in STOP_SIGNALS}

    def filtered(unraisable):
        value = unraisable.exc_value
        if not (isinstance(value, OSError) and str(value) in notes):
            hook(unraisable)
    filtered.drops_race_notes = True
    return filtered


def _ignored(signum, frame) -> None:
    """A later stop's handler while the first one unwinds: a Python handler that does nothing
    rather than SIG_IGN, which turns one already pending into an unraisable `Signal N ignored
    due to race condition`, printed with its traceback."""


def _as_stop(signum: int) -> BaseException:
    return KeyboardInterrupt() if signum == signal.SIGINT else Interrupted(signum)


class _Arrivals:
    """The order stop signals arrived in, through the interpreter's wakeup fd (one byte per
    signal, written by its C handler as the signal arrives). Python runs the handlers of
    signals pending at once by number, not by arrival: a SIGINT 1 ms after a SIGTERM would
    be handled, and named, first. Where another user of the wakeup fd holds it (an asyncio
    loop), nothing is taken and the handler's own signal is named. Signals pending together
    in the kernel (sent while no thread of ours ran) carry no order: the kernel hands them
    over lowest number first, and `_one_at_a_time` keeps their bytes in that order."""

    def __init__(self):
        self.read_end = self.write_end = -1
        self.previous = -1
        try:
            read_end, write_end = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            return
        self.previous = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
        if self.previous != -1:  # another's: put back
            signal.set_wakeup_fd(self.previous)
            os.close(read_end)
            os.close(write_end)
            return
        self.read_end, self.write_end = read_end, write_end

    def first(self, among: set) -> int | None:
        """The first of `among` to have arrived, or None where unknown."""
        if self.read_end == -1:
            return None
        try:
            arrived = os.read(self.read_end, 4096)
        except OSError:  # nothing there (BlockingIOError)
            return None
        return next((signum for signum in arrived if signum in among), None)

    def close(self) -> None:
        if self.read_end == -1:
            return
        signal.set_wakeup_fd(-1)
        os.close(self.read_end)
        os.close(self.write_end)
        self.read_end = self.write_end = -1


def _one_at_a_time(signums: set) -> None:
    """Each stop signal's C handler blocks the others while it runs. Python's handler leaves
    them open: of two pending together (a Ctrl-C, then a SIGTERM before the process ran), the
    kernel hands over the lower first, the higher interrupts its handler before that wrote
    its wakeup byte, and the bytes read SIGTERM first whichever came first. Blocked, the
    higher waits until the lower's byte is written. Only the mask changes; where libc's
    sigaction cannot be reached, nothing does (and off Linux, whose layout `_SigAction` is)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        for signum in signums:
            action = _SigAction()
            if libc.sigaction(signum, None, ctypes.byref(action)) != 0:
                return
            for other in signums:
                libc.sigaddset(ctypes.byref(action.sa_mask), other)
            libc.sigaction(signum, ctypes.byref(action), None)
    except (OSError, AttributeError):
        return


class _SigSet(ctypes.Structure):
    _fields_ = [("bits", ctypes.c_ulong * (1024 // (8 * ctypes.sizeof(ctypes.c_ulong))))]


class _SigAction(ctypes.Structure):
    """glibc's struct sigaction on Linux (all but MIPS): handler, mask, flags, restorer."""
    _fields_ = [("sa_handler", ctypes.c_void_p), ("sa_mask", _SigSet), ("sa_flags", ctypes.c_int),
                ("sa_restorer", ctypes.c_void_p)]


class _RaisedStops:
    """raised_as_interrupted's handlers and unraisable hook, installed while it lasts."""

    def __init__(self):
        self.stopping = False  # set first thing in stop(): a stop re-entering it returns at once
        self.in_hook = False  # inside send_again: a stop raised there would be swallowed as well
        self.resent: BaseException | None = None  # the stop the signal send_soon sends stands for
        self.timer: threading.Timer | None = None
        self.previous = {signum: signal.getsignal(signum) for signum in (*ENDING_SIGNALS, signal.SIGINT)}
        self.ours: set[int] = set()  # the signals handled here: the others are left as they were
        self.previous_hook = sys.unraisablehook
        self.arrivals = _Arrivals()  # before the handlers: each stop they see has its byte there
        try:
            for signum, before in self.previous.items():
                if signum in ENDING_SIGNALS and before is not signal.SIG_IGN:
                    self.ours.add(signum)
                    signal.signal(signum, self.handler)
                elif signum == signal.SIGINT and before is signal.default_int_handler:
                    self.ours.add(signum)
                    signal.signal(signum, self.interrupt)
            _one_at_a_time(self.ours)
        except BaseException:  # a Ctrl-C before the handlers were all in place
            self.restore()
            raise
        sys.unraisablehook = self.send_again

    def restore(self, keep_ignored: bool = False) -> None:
        if self.timer is not None:  # its signal, if sent, meets our handler, not the default action
            self.timer.cancel()
            self.timer.join()
        sys.unraisablehook = self.previous_hook
        if keep_ignored:
            ignore_stops_until_exit()
        else:
            for signum, before in self.previous.items():
                signal.signal(signum, before if before is not None else signal.SIG_DFL)
        self.arrivals.close()

    def handler(self, signum, frame) -> None:
        self.stop(signum)

    def interrupt(self, signum, frame) -> None:  # Python's own Ctrl-C, held where stops are held
        self.stop(signum)

    def ignore_later(self) -> None:
        """The first stop is the one the command ends by: a later one (a Ctrl-C after a
        SIGTERM too) cannot cut its cleanup short or change how it ends."""
        for signum in self.ours:
            signal.signal(signum, _ignored)

    def stop(self, signum: int) -> None:
        # CPython runs pending handlers between bytecodes and inside signal.signal, so a stop
        # arriving meanwhile re-enters here: the flag is set before any call that could run
        # one, and a re-entry returns at once
        if self.resent is not None:  # send_soon's signal: the stop it stands for
            exc, self.resent = self.resent, None
            self.ignore_later()
            if exc is _reraised:  # raised again meanwhile (check(), the block's end): unwinding
                return
        elif self.stopping:
            return
        else:
            self.stopping = True
            exc = _as_stop(self.arrivals.first(self.ours) or signum)
            self.ignore_later()
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
