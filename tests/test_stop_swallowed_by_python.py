"""A stop raised where Python cannot raise: a render stopped by SIGHUP right after it made
its temporary file went on rendering for minutes (the test of that stop timed out once on
CI at 120 s, stderr empty). The signal had landed while numpy imported a module, inside
importlib's weakref callback for the module's lock, or inside a Cython module's init that
registers its types with collections.abc and clears what goes wrong unseen: Python swallows
an exception raised in a weakref callback or a finalizer, and the handler had already set
later stop signals aside. Such a stop is now sent again and raised at the next point Python
can raise it; one cleared unseen is raised again by the next `stopping.check()`, which the
render's and the evaluation's step loops call each step; and one a library turned into an
error of its own (ctypes, as OpenGL's wrapper calls it: `argument 1: Interrupted: ...`, exit 1
as "unexpected") ends the command as the stop it was."""

import ctypes
import gc
import signal
import sys
import time
import weakref

import pytest

from sacscale.stopping import Interrupted, check, raised_as_interrupted

from test_stops_held import default_dispositions  # noqa: F401 - a fixture


class _Thing:
    pass


class _StoppedInFinalizer:
    def __init__(self, sig):
        self.sig = sig

    def __del__(self):
        _arrive_here(self.sig)


def _arrive_here(sig):
    """The signal reaches this thread now; its handler runs within this function."""
    signal.raise_signal(sig)
    time.sleep(0.5)


def _weakref_callback_stopped(sig):
    thing = _Thing()
    ref = weakref.ref(thing, lambda _ref: _arrive_here(sig))
    del thing  # the callback runs here
    return ref


def _finalizer_stopped(sig):
    _StoppedInFinalizer(sig)  # dropped at once: its __del__ runs here
    gc.collect()


def _ran_on(deadline_s):
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        time.sleep(0.01)


@pytest.mark.parametrize("where", [_weakref_callback_stopped, _finalizer_stopped],
                         ids=["weakref-callback", "finalizer"])
@pytest.mark.parametrize("sig, raised", [(signal.SIGHUP, Interrupted), (signal.SIGTERM, Interrupted),
                                         (signal.SIGINT, KeyboardInterrupt)], ids=["SIGHUP", "SIGTERM", "SIGINT"])
def test_a_stop_python_swallowed_is_raised_at_the_next_point(default_dispositions, where, sig, raised):  # noqa: F811
    reached = []
    with pytest.raises(raised) as stopped:
        with raised_as_interrupted():
            where(sig)
            reached.append("after the callback")
            _ran_on(10)  # the command goes on: the stop must end it here, not run for minutes
            reached.append("the end")
    assert "the end" not in reached
    if raised is Interrupted:
        assert stopped.value.signum == sig


def test_another_swallowed_exception_goes_to_the_hook_before(default_dispositions, monkeypatch):  # noqa: F811
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", seen.append)

    def callback(_ref):
        raise ValueError("a callback's own bug")

    with raised_as_interrupted():
        thing = _Thing()
        ref = weakref.ref(thing, callback)
        del thing
    assert ref() is None
    assert [str(u.exc_value) for u in seen] == ["a callback's own bug"]
    assert sys.unraisablehook == seen.append


@pytest.mark.parametrize("sig, raised", [(signal.SIGHUP, Interrupted), (signal.SIGINT, KeyboardInterrupt)],
                         ids=["SIGHUP", "SIGINT"])
def test_a_stop_cleared_unseen_is_raised_by_the_next_check(default_dispositions, sig, raised):  # noqa: F811
    turns = []
    with pytest.raises(raised):
        with raised_as_interrupted():
            try:
                _arrive_here(sig)
            except BaseException:  # noqa: BLE001 - as C code that clears the error it got
                pass
            for turn in range(100):
                check()  # a step loop's
                turns.append(turn)
                time.sleep(0.01)
    assert turns == []


def test_check_raises_nothing_once_the_command_has_ended(default_dispositions):  # noqa: F811
    with pytest.raises(Interrupted):
        with raised_as_interrupted():
            _arrive_here(signal.SIGTERM)
    check()  # the stop was delivered: no later command (a test calling the CLI again) sees it


def test_a_stop_a_library_turned_into_its_own_error_ends_the_command_as_the_stop(default_dispositions):  # noqa: F811
    with pytest.raises(Interrupted) as stopped:
        with raised_as_interrupted():
            try:
                _arrive_here(signal.SIGHUP)
            except BaseException as exc:  # as ctypes wraps what a parameter's conversion raised
                raise ctypes.ArgumentError(f"argument 1: {type(exc).__name__}: {exc}") from None
    assert stopped.value.signum == signal.SIGHUP
    assert isinstance(stopped.value.__cause__, ctypes.ArgumentError)


def test_an_error_with_no_stop_leaves_as_itself(default_dispositions):  # noqa: F811
    with pytest.raises(ValueError):
        with raised_as_interrupted():
            raise ValueError("a bug of the command's own")


def test_a_ctrl_c_during_the_cleanup_of_a_stop_changes_nothing(default_dispositions):  # noqa: F811
    try:
        with pytest.raises(Interrupted) as stopped:
            with raised_as_interrupted():
                try:
                    _arrive_here(signal.SIGTERM)
                finally:
                    _arrive_here(signal.SIGINT)  # a Ctrl-C while the first stop's cleanup runs
    except KeyboardInterrupt:
        pytest.fail("the Ctrl-C replaced the SIGTERM the command was ending by (exit 130, 'interrupted (SIGTERM)')")
    assert stopped.value.signum == signal.SIGTERM


def test_a_stop_a_command_turned_into_its_own_error_line_ends_as_the_stop(default_dispositions, monkeypatch,  # noqa: F811
                                                                           capsys, tmp_path):
    from sacscale import cli
    from sacscale.commands import aggregate

    def stopped_while_loading(args):  # as pybind11 turns a stop during a module's start into ImportError
        try:
            _arrive_here(signal.SIGHUP)
        except BaseException:
            raise ImportError("initialization failed") from None

    monkeypatch.setattr(aggregate, "run", stopped_while_loading)
    code = cli._guarded(["aggregate", "--csv", str(tmp_path / "s.csv"), "--json", str(tmp_path / "s.json"),
                         str(tmp_path / "m.json")])
    assert (code, capsys.readouterr().err.strip()) == (129, "sacscale aggregate: interrupted (SIGHUP)")


def test_a_stop_a_command_turned_into_a_return_ends_as_the_stop(default_dispositions):  # noqa: F811
    with pytest.raises(Interrupted):
        with raised_as_interrupted():
            try:
                _arrive_here(signal.SIGHUP)
            except Interrupted:
                pass  # as a command's own `except` that says its error and returns 1


def test_a_stop_raised_again_before_its_signal_is_sent_again_is_not_raised_twice(default_dispositions):  # noqa: F811
    cleaned = []
    with pytest.raises(Interrupted):
        with raised_as_interrupted():
            try:
                _weakref_callback_stopped(signal.SIGHUP)  # lost there: sent again 10 ms later
                check()  # a step loop's, sooner: the stop is on its way out
            finally:
                _ran_on(0.2)  # the cleanup, while the signal sent again arrives
                cleaned.append("done")
    assert cleaned == ["done"]
