"""Fault 4, trainer side: SIGTERM or SIGINT to the trainer's process group mid-run (what
the pipeline's run wrapper forwards when Snakemake is interrupted, what Ctrl-C sends).

Guarantee: the job stops within a bounded time with exit status 128+signal and a message
naming the signal; every process of the job is gone and every shared-memory block it
made is unlinked; the event files written so far are complete and readable;
train_meta.json says "interrupted". Before the signal, each 2-rank job is checked to
listen on loopback only (listening.py).
"""

import json
import os
import signal
import time

import pytest
from faultkit import Job, logged_iterations, record, train_cmd, wait_for
from listening import check_loopback_only

STOP_BOUND_S = 15.0  # signal -> job exit; measured about 1 s on 2 cores


@pytest.mark.parametrize(
    "devices, sig",
    [("cpu", signal.SIGTERM), ("cpu", signal.SIGINT), ("cpu,cpu", signal.SIGTERM), ("cpu,cpu", signal.SIGINT)],
    ids=["1rank-SIGTERM", "1rank-SIGINT", "2ranks-SIGTERM", "2ranks-SIGINT"],
)
def test_signal_to_the_group_stops_the_trainer_cleanly(tmp_path, g1_mjb, jobs, devices, sig):
    from sacscale.analysis.events import read_run

    log_dir = tmp_path / "run"
    job = Job(train_cmd(log_dir, g1_mjb, devices=devices), tmp_path)
    jobs.append(job)
    wait_for(lambda: logged_iterations(log_dir) >= 10, 120, "10 logged iterations", job=job)
    assert any("/dev/shm/sacscale_" in m for m in job.note_mapped())  # its blocks (already unlinked), checked after
    if "," in devices:
        check_loopback_only(job)  # a running multi-rank job exposes nothing beyond loopback
    sent = time.monotonic()
    os.killpg(job.pid, sig)

    code = job.wait(60)
    elapsed = job.t_exit - sent
    leftovers = job.leftovers()
    name = signal.Signals(sig).name
    record("trainer interrupted", devices=devices, signal=name, exit_status=code, exit_after_s=round(elapsed, 2),
           leftovers=leftovers, new_shm=sorted(job.new_shm()), message=job.message())

    assert code == 128 + sig, job.stderr()
    assert elapsed < STOP_BOUND_S
    assert f"interrupted by {name}" in job.message(), job.stderr()
    assert leftovers == []
    assert job.new_shm() == set()
    runs = read_run(log_dir)
    assert sorted(runs) == list(range(len(devices.split(","))))
    assert all(max(s.step for s in tags["Perf/iteration"]) >= 10 for tags in runs.values())
    meta = json.loads((log_dir / "train_meta.json").read_text())
    assert meta["status"] == "interrupted", meta


def test_sigkill_of_the_job_leaves_no_rank_or_collector_behind(tmp_path, g1_mjb, jobs):
    """The job's own process SIGKILLed (no cleanup possible there): its ranks and
    collectors die with it (PR_SET_PDEATHSIG) instead of training on as orphans."""
    log_dir = tmp_path / "run"
    job = Job(train_cmd(log_dir, g1_mjb, devices="cpu,cpu"), tmp_path)
    jobs.append(job)
    wait_for(lambda: logged_iterations(log_dir) >= 10, 120, "10 logged iterations", job=job)
    assert job.collector(0) and job.collector(1)
    assert any("/dev/shm/sacscale_" in m for m in job.note_mapped())  # its blocks (already unlinked), checked after
    sent = time.monotonic()
    os.kill(job.pid, signal.SIGKILL)
    code = job.wait(30)
    leftovers = job.leftovers(grace=15)
    gone_after = time.monotonic() - sent
    record("job SIGKILL", exit_status=code, all_gone_after_s=round(gone_after, 2), leftovers=leftovers,
           new_shm=sorted(job.new_shm()))
    assert code == -signal.SIGKILL
    assert leftovers == []
    assert gone_after < 15
    assert job.new_shm() == set()  # the ranks, stopped by SIGTERM, unlinked their blocks
