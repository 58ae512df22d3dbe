"""sacscale.stopping.stops_held: a block the stop raised by raised_as_interrupted cannot
land inside (the MP4 writer's start of ffmpeg, its frame handoffs); the stop is raised as
the block ends. Ctrl-C is held the same way; outside a hold both raise where they land."""

import os
import signal
import time

import pytest

from sacscale.stopping import Interrupted, raised_as_interrupted, stops_held


@pytest.fixture
def default_dispositions():
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)}
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    for s, h in saved.items():
        signal.signal(s, h)


def _arrived(sig):
    os.kill(os.getpid(), sig)
    time.sleep(0.01)  # the handler has run by now (at the next bytecode)


@pytest.mark.parametrize("sig, raised", [(signal.SIGHUP, Interrupted), (signal.SIGINT, KeyboardInterrupt)],
                         ids=["SIGHUP", "SIGINT"])
def test_a_stop_inside_the_block_is_raised_as_it_ends(default_dispositions, sig, raised):
    done = []
    with pytest.raises(raised) as stopped:
        with raised_as_interrupted():
            with stops_held():
                _arrived(sig)
                done.append("the rest of the block")
            done.append("past the block")
    assert done == ["the rest of the block"]
    if raised is Interrupted:
        assert stopped.value.signum == sig


def test_a_stop_outside_a_hold_is_raised_where_it_lands(default_dispositions):
    done = []
    with pytest.raises(KeyboardInterrupt):
        with raised_as_interrupted():
            with stops_held():
                done.append("held block")
            _arrived(signal.SIGINT)
            done.append("after the signal")
    assert done == ["held block"]


def test_the_handlers_are_put_back_and_a_later_block_holds_nothing_stale(default_dispositions):
    with pytest.raises(Interrupted):
        with raised_as_interrupted():
            with stops_held():
                _arrived(signal.SIGTERM)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with raised_as_interrupted():
        with stops_held():
            pass  # no stop raised here


def test_without_raised_as_interrupted_a_hold_changes_nothing(default_dispositions):
    with pytest.raises(KeyboardInterrupt):
        with stops_held():
            _arrived(signal.SIGINT)
            pytest.fail("Python's own Ctrl-C handler is not held")
