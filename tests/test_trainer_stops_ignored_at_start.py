"""sacscale.stopping.install, the trainers' stop handlers (`sacscale train` and each of its
rank processes): a stop signal ignored when the process started stays ignored. A training
started under `nohup` (SIGHUP ignored) was ended by the hangup nohup shields it from
(`interrupted by SIGHUP`, 129); the other stops are still recorded."""

import os
import signal
import time

import pytest

from sacscale import stopping

STOPS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


@pytest.fixture
def dispositions():
    saved = {s: signal.getsignal(s) for s in STOPS}
    yield
    for s, h in saved.items():
        signal.signal(s, h)


def _arrived(sig):
    os.kill(os.getpid(), sig)
    time.sleep(0.01)  # the handler has run by now (at the next bytecode)


@pytest.mark.parametrize("ignored", [signal.SIGHUP, signal.SIGINT], ids=["nohup-SIGHUP", "background-SIGINT"])
def test_a_stop_ignored_at_start_stays_ignored_and_the_others_are_recorded(dispositions, ignored):
    for s in STOPS:
        signal.signal(s, signal.SIG_IGN if s == ignored else signal.SIG_DFL)
    previous = stopping.install()
    try:
        assert signal.getsignal(ignored) is signal.SIG_IGN
        _arrived(ignored)
        assert stopping.requested() is None
        _arrived(signal.SIGTERM)
        assert stopping.requested() == signal.SIGTERM
    finally:
        stopping.restore(previous)
    assert signal.getsignal(ignored) is signal.SIG_IGN
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    assert stopping.requested() is None


def test_with_nothing_ignored_every_stop_is_recorded(dispositions):
    for s in STOPS:
        signal.signal(s, signal.SIG_DFL)
    previous = stopping.install()
    try:
        _arrived(signal.SIGHUP)
        assert stopping.requested() == signal.SIGHUP
    finally:
        stopping.restore(previous)
    assert all(signal.getsignal(s) is signal.SIG_DFL for s in STOPS)
