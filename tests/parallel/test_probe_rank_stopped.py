"""A probe rank told to stop (the job's stop signal, or its supervisor gone: the ranks get
SIGTERM when it dies) ends at its next iteration and writes no result: a result written
after the pipeline had gone was taken as done by its next invocation."""

import os
import signal

import pytest

from sacscale import stopping
from sacscale.parallel.probe import run_probe
from sacscale.parallel.probe_settings import ProbeSettings

SMALL = dict(iterations=2, batch_size=32, replay_rows=1024,
             learner={"actor_hidden": [32, 32], "critic_hidden": [48, 32], "num_atoms": 21})


@pytest.fixture
def stop_recorded():
    """What a rank process has (sacscale.parallel.launch.rank_entry): stops recorded."""
    saved = {s: signal.getsignal(s) for s in stopping.STOP_SIGNALS}
    for s in stopping.STOP_SIGNALS:
        signal.signal(s, signal.SIG_DFL)
    previous = stopping.install()
    yield
    stopping.restore(previous)
    for s, h in saved.items():
        signal.signal(s, h)


def test_a_rank_told_to_stop_writes_no_result(tmp_path, stop_recorded):
    out = tmp_path / "correctness.json"
    os.kill(os.getpid(), signal.SIGTERM)
    with pytest.raises(stopping.Interrupted):
        run_probe(ProbeSettings(["cpu"], **SMALL), str(out))
    assert not out.exists()
