"""Fault 2: a collector process SIGKILLed mid-run.

Guarantee: the learner(s) exit non-zero within a bounded time with a message naming the
collector and its rank; no process of the job and no shared-memory block it created
remain; the event files written so far stay readable; train_meta.json says "failed".
"""

import json
import re
import signal

import pytest
from faultkit import Job, kill, logged_iterations, record, train_cmd, wait_for

DETECT_BOUND_S = 10.0  # kill -> job exit; measured ~1 s on 2 cores (POLL_S is 0.2 s)


@pytest.mark.parametrize("devices, rank", [("cpu", 0), ("cpu,cpu", 1)], ids=["1rank", "2ranks-collector1"])
def test_collector_sigkill_fails_the_job_naming_it(tmp_path, g1_mjb, jobs, devices, rank):
    from sacscale.analysis.events import read_run

    log_dir = tmp_path / "run"
    job = Job(train_cmd(log_dir, g1_mjb, devices=devices), tmp_path)
    jobs.append(job)
    wait_for(lambda: logged_iterations(log_dir) >= 10, 120, "10 logged iterations (learning has started)", job=job)
    collector = wait_for(lambda: job.collector(rank), 10, f"the collector of rank {rank}", job=job)
    assert any("/dev/shm/sacscale_" in m for m in job.note_mapped())  # its blocks (already unlinked), checked after
    t_kill = kill(collector, signal.SIGKILL)

    code = job.wait(60)
    elapsed = job.t_exit - t_kill
    err = job.stderr()
    leftovers = job.leftovers()
    record("collector SIGKILL", devices=devices, rank=rank, exit_status=code, exit_after_s=round(elapsed, 2),
           leftovers=leftovers, new_shm=sorted(job.new_shm()), message=job.message())

    assert code != 0
    assert elapsed < DETECT_BOUND_S
    assert re.search(rf"collector of rank {rank} \(pid {collector.pid}\) was killed by signal 9 \(SIGKILL\)", err), err
    if devices == "cpu,cpu":
        assert re.search(rf"rank {rank} \(device cpu, pid \d+\) failed: CollectorError: collector of rank {rank}",
                         err), err
    assert leftovers == []
    assert job.new_shm() == set()
    # completed evidence stays: every rank's events up to the kill are readable
    runs = read_run(log_dir)
    assert sorted(runs) == list(range(len(devices.split(","))))
    assert max(s.step for s in runs[0]["Perf/iteration"]) >= 10
    meta = json.loads((log_dir / "train_meta.json").read_text())
    assert meta["status"] == "failed" and f"collector of rank {rank}" in meta["error"]


def test_frozen_collector_times_out_naming_it(tmp_path, g1_mjb, jobs):
    """SIGSTOP: the collector is alive but produces nothing. The learner gives up after
    --timeout-s, names the collector, and kills it (a stopped process cannot act on the
    stop request or SIGTERM)."""
    timeout_s = 3
    log_dir = tmp_path / "run"
    job = Job(train_cmd(log_dir, g1_mjb, timeout_s=timeout_s), tmp_path)
    jobs.append(job)
    wait_for(lambda: logged_iterations(log_dir) >= 10, 120, "10 logged iterations", job=job)
    collector = wait_for(lambda: job.collector(0), 10, "the collector", job=job)
    assert any("/dev/shm/sacscale_" in m for m in job.note_mapped())
    t_stop = kill(collector, signal.SIGSTOP)

    code = job.wait(60)
    elapsed = job.t_exit - t_stop
    leftovers = job.leftovers()
    record("collector SIGSTOP", timeout_s=timeout_s, exit_status=code, exit_after_s=round(elapsed, 2),
           leftovers=leftovers, new_shm=sorted(job.new_shm()), message=job.message())
    assert code == 1
    assert elapsed < timeout_s + 5
    assert re.search(rf"collector of rank 0 \(pid {collector.pid}\) produced no data for {timeout_s} s", job.message())
    assert leftovers == [] and job.new_shm() == set()
