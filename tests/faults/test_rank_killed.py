"""Fault 3: one rank of a 2-rank job killed (or frozen) mid-run.

Guarantee: the other rank does not hang; the job exits non-zero within the configured
--timeout-s (plus the stop grace) with a message naming the dead rank; no process of the
job and no shared-memory block it created remain; every rank's events stay readable.
"""

import json
import os
import re
import signal

import psutil
import pytest
from faultkit import Job, free_port, kill, logged_iterations, record, train_cmd, wait_for

TIMEOUT_S = 20  # the job's --timeout-s
# the promise: --timeout-s plus the stop grace (parallel.launch.KILL_GRACE_S); on a loaded 2-core
# machine a survivor under an external launcher took 21.3 s, its collective's timeout and its exit
EXIT_BOUND_S = TIMEOUT_S + 10


@pytest.mark.parametrize("rank", [0, 1])
def test_killed_rank_is_named_and_the_job_ends(tmp_path, g1_mjb, jobs, rank):
    from sacscale.analysis.events import read_run

    log_dir = tmp_path / "run"
    job = Job(train_cmd(log_dir, g1_mjb, devices="cpu,cpu", timeout_s=TIMEOUT_S), tmp_path)
    jobs.append(job)
    wait_for(lambda: logged_iterations(log_dir) >= 10, 120, "10 logged iterations (learning has started)", job=job)
    victim = wait_for(lambda: job.learner(rank), 10, f"the process of rank {rank}", job=job)
    assert any("/dev/shm/sacscale_" in m for m in job.note_mapped())  # its blocks (already unlinked), checked after
    t_kill = kill(victim, signal.SIGKILL)

    code = job.wait(TIMEOUT_S + 30)
    elapsed = job.t_exit - t_kill
    err = job.stderr()
    leftovers = job.leftovers()
    record("rank SIGKILL", rank=rank, exit_status=code, exit_after_s=round(elapsed, 2), leftovers=leftovers,
           new_shm=sorted(job.new_shm()), message=job.message())

    assert code != 0
    assert elapsed < EXIT_BOUND_S
    last = job.message()
    assert re.search(rf"rank {rank} \(device cpu, pid {victim.pid}\) was killed by signal 9 \(SIGKILL\)", last), err
    assert leftovers == []
    assert job.new_shm() == set()
    runs = read_run(log_dir)
    assert sorted(runs) == [0, 1] and max(s.step for s in runs[1 - rank]["Perf/iteration"]) >= 10
    meta = json.loads((log_dir / "train_meta.json").read_text())
    assert meta["status"] == "failed" and f"rank {rank}" in meta["error"]


def test_frozen_rank_times_out_and_the_job_ends(tmp_path, g1_mjb, jobs):
    """SIGSTOP: the rank is alive but never answers. The other rank's collective times
    out after --timeout-s; the job kills the frozen rank, fails naming it, never hangs."""
    timeout_s = 8  # generous: ranks must also meet in their first collectives (start-up skew under load)
    log_dir = tmp_path / "run"
    job = Job(train_cmd(log_dir, g1_mjb, devices="cpu,cpu", timeout_s=timeout_s), tmp_path)
    jobs.append(job)
    wait_for(lambda: logged_iterations(log_dir) >= 10, 120, "10 logged iterations (learning has started)", job=job)
    victim = wait_for(lambda: job.learner(1), 10, "the process of rank 1", job=job)
    assert any("/dev/shm/sacscale_" in m for m in job.note_mapped())  # its blocks (already unlinked), checked after
    t_stop = kill(victim, signal.SIGSTOP)

    code = job.wait(timeout_s + 60)
    elapsed = job.t_exit - t_stop
    err = job.stderr()
    leftovers = job.leftovers()
    record("rank SIGSTOP", rank=1, timeout_s=timeout_s, exit_status=code, exit_after_s=round(elapsed, 2),
           leftovers=leftovers, new_shm=sorted(job.new_shm()), message=job.message())

    assert code != 0
    assert elapsed < timeout_s + 10  # the peer's collective times out; the frozen rank is killed at once
    message = job.message()
    assert re.search(rf"rank 1 \(device cpu, pid {victim.pid}\) was frozen", message), err
    assert re.search(r"then rank 0 \(device cpu, pid \d+\) failed: .*Timed out", message), err
    assert leftovers == []
    assert job.new_shm() == set()


def test_killed_rank_under_an_external_launcher(tmp_path, g1_mjb, jobs):
    """Ranks started by an external launcher (torchrun, a cluster: RANK/WORLD_SIZE set),
    one process each, no supervisor of ours: the survivor's collective fails (peer
    closed) or times out, so it exits non-zero within --timeout-s; the launcher names
    the dead rank. Nothing of either rank is left behind."""
    env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port()), "WORLD_SIZE": "2"}
    log_dir = tmp_path / "run"
    ranks = []
    for rank in (0, 1):
        cmd = train_cmd(log_dir, g1_mjb, devices="cpu,cpu", timeout_s=TIMEOUT_S)
        ranks.append(Job(cmd, tmp_path, env={**env, "RANK": str(rank), "LOCAL_RANK": str(rank)}, name=f"rank{rank}"))
        jobs.append(ranks[-1])
    survivor, victim = ranks
    wait_for(lambda: logged_iterations(log_dir) >= 10, 120, "10 logged iterations", job=survivor)
    for job in ranks:
        assert any("/dev/shm/sacscale_" in m for m in job.note_mapped())
    t_kill = kill(psutil.Process(victim.pid), signal.SIGKILL)

    code = survivor.wait(TIMEOUT_S + 30)
    elapsed = survivor.t_exit - t_kill
    victim.wait(10)
    leftovers = survivor.leftovers() + victim.leftovers()
    record("rank SIGKILL, external launcher", exit_status=code, exit_after_s=round(elapsed, 2), leftovers=leftovers,
           new_shm=sorted(survivor.new_shm() | victim.new_shm()), message=survivor.message())
    assert code == 1
    assert elapsed < EXIT_BOUND_S
    assert re.search(r"sacscale train: error: .*(Connection closed by peer|Connection reset|Timed out)",
                     survivor.message())
    assert leftovers == []
    assert survivor.new_shm() == set() and victim.new_shm() == set()
    meta = json.loads((log_dir / "train_meta.json").read_text())
    assert meta["status"] == "failed"


def test_a_late_rank_under_an_external_launcher_joins_the_directory_rank_0_claimed(tmp_path, g1_mjb, jobs):
    """Rank 1 starts only once rank 0 has written train_meta.json into the shared log
    directory: the reused-directory check is rank 0's alone, so rank 1 joins and trains."""
    env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port()), "WORLD_SIZE": "2"}
    log_dir = tmp_path / "run"

    def start(rank):
        cmd = train_cmd(log_dir, g1_mjb, devices="cpu,cpu", timeout_s=120)
        job = Job(cmd, tmp_path, env={**env, "RANK": str(rank), "LOCAL_RANK": str(rank)}, name=f"rank{rank}")
        jobs.append(job)
        return job

    first = start(0)
    wait_for(lambda: (log_dir / "train_meta.json").exists(), 120, "rank 0's train_meta.json", job=first)
    late = start(1)
    wait_for(lambda: logged_iterations(log_dir) >= 3, 180, "3 logged iterations", job=late)
    assert late.proc.poll() is None and first.proc.poll() is None
