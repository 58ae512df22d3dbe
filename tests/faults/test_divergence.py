"""Fault 7: a trainer that diverges (NaN/inf parameters or losses).

Trigger: an absurd learning rate (--extra '{"lr": 1e30, "weight_decay": 0}'), which the learner settings' ranges
refuse before a run starts: a sitecustomize.py the test puts on PYTHONPATH widens that one range in
every process of the job (ranks and collectors start their own interpreters), so the trainer's
own detection is what stops the run. Nothing else is patched.
Guarantee: detected outside the graph within a bounded number of iterations (every
iteration: a finiteness flag per learner state tensor; an update that fails on
non-finite state is reported as divergence; every --log-every: the losses), the run
stops non-zero with a message saying "diverged" and the iteration, and keeps its event
files (all finite, up to the iteration before) and train_meta.json (status failed).
"""

import json
import math
import os
import re

import pytest
from faultkit import Job, record, train_cmd

LEARNING_STARTS_AT = 8  # 64 rows / 8 envs: the first iteration with a learner update
BOUND_ITERATIONS = 2    # detected at most this many iterations after the first bad update


def _lr_range_widened(tmp_path) -> dict:
    """The job's environment with a sitecustomize.py that lets any positive learning rate through."""
    hook = tmp_path / "widen_lr"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "import sacscale.checks as checks\n"
        "checks._RANGES['lr'] = (lambda v: v > 0, '> 0')\n")
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(hook), os.environ.get("PYTHONPATH")]))}


@pytest.mark.parametrize(
    "devices, critic_updates, actor_updates, what, name",
    [
        ("cpu", 1, 1, "state", "actor"),           # the actor's parameters blow up first
        ("cpu", 1, 0, "(state|metrics)", ""),      # no actor update: critic, alpha or their losses tell
        ("cpu", 8, 2, "state", ""),                # the reference schedule: NaN inside one iteration
        ("cpu,cpu", 1, 1, "state", "actor"),       # data parallel: the rank is named too
    ],
    ids=["actor", "critic-only", "reference-schedule", "2ranks"],
)
def test_divergence_stops_the_run_and_keeps_its_events(tmp_path, g1_mjb, jobs, devices, critic_updates,
                                                       actor_updates, what, name):
    from sacscale.analysis.events import read_run

    log_dir = tmp_path / "run"
    cmd = train_cmd(log_dir, g1_mjb, devices=devices, iterations=40, extra={"lr": 1e30, "weight_decay": 0},
                    num_critic_updates=critic_updates, num_actor_updates=actor_updates)
    job = Job(cmd, tmp_path, env=_lr_range_widened(tmp_path))
    jobs.append(job)
    code = job.wait(120)
    message = job.message()
    record("divergence", devices=devices, schedule=f"{critic_updates}/{actor_updates}", exit_status=code,
           seconds=round(job.t_exit - job.t_start, 2), message=message)

    assert code == 1, job.stderr()
    found = re.search(rf"rank \d: diverged at iteration (\d+): non-finite learner {what} \[[^\]]*'{name}", message)
    assert found, job.stderr()
    iteration = int(found.group(1))
    assert LEARNING_STARTS_AT <= iteration <= LEARNING_STARTS_AT + BOUND_ITERATIONS
    if devices == "cpu,cpu":
        assert re.search(r"rank \d \(device cpu, pid \d+\) failed: TrainingError: rank \d: ", message), message
    assert "index" not in message.split("; the update failed on it")[0]  # named as divergence, not its symptom

    assert job.leftovers() == [] and job.new_shm() == set()
    runs = read_run(log_dir)  # the event files stay, complete and readable
    for tags in runs.values():
        logged = [s.step for s in tags["Perf/iteration"]]
        assert logged == list(range(1, iteration))  # every iteration before the bad one
        for tag, series in tags.items():
            assert all(math.isfinite(s.value) for s in series), tag
    meta = json.loads((log_dir / "train_meta.json").read_text())
    assert meta["status"] == "failed" and "diverged" in meta["error"]
