"""The pipeline stopped by its process group (Ctrl-C, `kill -TERM -PGID`, a closed
terminal) during the correctness probe or the model's preparation. Their rules ran the
command under GNU `timeout`, which puts itself and the command in a process group of
their own: the stop ended Snakemake, and the probe (or prepare-model) ran on orphaned and
wrote correctness.json (model.json) after the pipeline had gone, which the next invocation
took as done. Now the stop reaches the command: nothing of the pipeline is left and
nothing is written after it ended. The same rules still end a command that outlives its
time limit. A stand-in `sacscale` (tests/faults/slow_sacscale.py) sleeps in that step."""

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest
import yaml
from faultkit import describe
from pipeline_helpers import SNAKEMAKE, copy_of, copy_workflow, stand_in_first_run_done
from test_pipeline_interrupted import stand_in_env

pytestmark = pytest.mark.slow

SLOW_S = 6.0  # the stand-in's step: long enough to stop it, short enough to see what it does after
STEPS = {"probe": ["results/cpu/correctness.json"],
         "prepare-model": ["results/cpu/model.json", "results/cpu/model"]}


def _without_step(tmp_path, tmp_path_factory, step: str) -> Path:
    """A copy of the set with everything up to its first run done, less `step`'s outputs."""
    workdir = copy_of(stand_in_first_run_done(tmp_path_factory), tmp_path / "wf")
    for name in STEPS[step]:
        path = workdir / name
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    return workdir


def _start(workdir: Path, env: dict, step: str, *config: str) -> subprocess.Popen:
    with open(workdir / "snakemake.out", "wb") as out:
        return subprocess.Popen([SNAKEMAKE, "--cores", "all", STEPS[step][0], *config], cwd=workdir, env=env,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def _wait_for(marker: Path, proc: subprocess.Popen, workdir: Path) -> None:
    deadline = time.monotonic() + 120
    while not marker.exists():
        assert proc.poll() is None, (workdir / "snakemake.out").read_text()[-3000:]
        assert time.monotonic() < deadline, f"{marker.name} never appeared"
        time.sleep(0.05)


def _alive(procs: list[psutil.Process]) -> list[str]:
    return describe([p for p in procs if p.is_running() and p.status() != psutil.STATUS_ZOMBIE])


@pytest.mark.parametrize("step", sorted(STEPS))
def test_a_stop_to_the_pipelines_group_ends_the_step_and_nothing_is_written_after(tmp_path, tmp_path_factory, step):
    workdir = _without_step(tmp_path, tmp_path_factory, step)
    env = {**stand_in_env(tmp_path), "FAKE_SLOW_STEP": step, "FAKE_SLOW_S": str(SLOW_S)}
    proc = _start(workdir, env, step)
    seen: list[psutil.Process] = []
    try:
        _wait_for(Path(env["FAKE_MARKER_DIR"]) / f"{step}.started", proc, workdir)
        started = time.monotonic()
        seen = psutil.Process(proc.pid).children(recursive=True)  # shell, timeout, the step
        assert any(step in " ".join(p.cmdline()) for p in seen), describe(seen)
        os.killpg(proc.pid, signal.SIGTERM)
        assert proc.wait(60) != 0
        # until every process of the step is gone, at most past the stand-in's sleep: an orphaned
        # step is then either still there or has written its output
        deadline = started + SLOW_S + 2
        while _alive(seen) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _alive(seen) == []
        assert not (workdir / STEPS[step][0]).exists(), f"{STEPS[step][0]} written after the pipeline ended"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        for p in seen:
            try:
                p.kill()
            except psutil.Error:
                pass


def test_a_probe_past_its_time_limit_is_still_ended(tmp_path):
    """A new set whose probe may take 1 s: the stand-in's probe sleeps on, and is ended."""
    workdir = copy_workflow(tmp_path / "wf")
    probe = {**yaml.safe_load((workdir / "workflow" / "presets.yaml").read_text())["presets"]["cpu"]["probe"],
             "timeout_s": 1}
    (workdir / "limit.yaml").write_text(yaml.safe_dump({"preset": "cpu", "run_set": "limit", "probe": probe}))
    env = {**stand_in_env(tmp_path), "FAKE_SLOW_STEP": "probe", "FAKE_SLOW_S": "3600"}
    with open(workdir / "snakemake.out", "wb") as out:
        proc = subprocess.Popen([SNAKEMAKE, "results/limit/correctness.json", "--cores", "all",
                                 "--configfile", "limit.yaml"], cwd=workdir, env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_for(Path(env["FAKE_MARKER_DIR"]) / "probe.started", proc, workdir)
        seen = psutil.Process(proc.pid).children(recursive=True)
        assert proc.wait(60) != 0, (workdir / "snakemake.out").read_text()[-3000:]
        time.sleep(0.5)
        assert _alive(seen) == []
        assert not (workdir / "results" / "limit" / "correctness.json").exists()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
