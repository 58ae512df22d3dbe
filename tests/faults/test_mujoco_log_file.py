"""MuJoCo appends its warnings to MUJOCO_LOG.TXT in the working folder, opening that name as
it finds it: run from a folder another user can write, a sacscale command would append to
whatever file that user's link there names. No sacscale process (the command's own, or its
spawned collectors) lets MuJoCo write a log file; its warnings still reach the console."""

import re
import subprocess
from pathlib import Path

import pytest
from faultkit import SACSCALE, Job, train_cmd

UNSTABLE_WARNING = "Nan, Inf or huge value in QACC"


@pytest.fixture(scope="module")
def unstable_mjb(g1_mjb, tmp_path_factory):
    """The task's model with a 0.5 s time step: every simulation blows up within a few steps."""
    import mujoco

    model = mujoco.MjModel.from_binary_path(str(g1_mjb))
    model.opt.timestep = 0.5
    path = tmp_path_factory.mktemp("unstable") / "unstable.mjb"
    mujoco.mj_saveModel(model, str(path), None)
    return path


@pytest.fixture
def planted(tmp_path):
    """A working folder whose MUJOCO_LOG.TXT is a link to someone's file, and the file."""
    folder, target = tmp_path / "w", tmp_path / "theirs.txt"
    folder.mkdir()
    target.write_text("x\n")
    (folder / "MUJOCO_LOG.TXT").symlink_to(target)
    return folder, target


def _nothing_written(folder, target) -> None:
    assert target.read_text() == "x\n"
    assert (folder / "MUJOCO_LOG.TXT").is_symlink()


def test_env_bench_writes_no_mujoco_log(tmp_path, planted, unstable_mjb):
    folder, target = planted
    out = tmp_path / "bench.json"
    done = subprocess.run([SACSCALE, "env-bench", "--model", str(unstable_mjb), "--num-envs", "4", "--threads", "1",
                           "--steps", "20", "--warmup", "0", "--no-progress", "--output", str(out)],
                          cwd=folder, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert UNSTABLE_WARNING in done.stdout + done.stderr  # the console still has MuJoCo's word
    _nothing_written(folder, target)


def test_env_bench_makes_no_log_file_through_a_dangling_link(tmp_path, unstable_mjb):
    folder, target = tmp_path / "w", tmp_path / "not-there.txt"
    folder.mkdir()
    (folder / "MUJOCO_LOG.TXT").symlink_to(target)
    done = subprocess.run([SACSCALE, "env-bench", "--model", str(unstable_mjb), "--num-envs", "4", "--threads", "1",
                           "--steps", "20", "--warmup", "0", "--no-progress", "--output", str(tmp_path / "b.json")],
                          cwd=folder, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert not target.exists()


def test_train_collectors_write_no_mujoco_log(tmp_path, planted, unstable_mjb, jobs):
    folder, target = planted
    cmd = train_cmd(tmp_path / "run", unstable_mjb, iterations=3)
    cmd[cmd.index("--num-envs") + 1] = "4"
    job = Job(cmd, folder)
    jobs.append(job)
    job.wait(120)
    assert UNSTABLE_WARNING in job.stdout() + job.stderr()  # a collector stepped the unstable model
    _nothing_written(folder, target)


def test_every_module_loads_mujoco_through_the_one_that_turns_the_file_log_off():
    src = Path(__file__).resolve().parents[2] / "src" / "sacscale"
    direct = re.compile(r"^\s*(import mujoco\b|from mujoco import)", re.M)
    offenders = [str(p.relative_to(src)) for p in sorted(src.rglob("*.py"))
                 if p.name != "mujoco_lib.py" and direct.search(p.read_text())]
    assert offenders == []
