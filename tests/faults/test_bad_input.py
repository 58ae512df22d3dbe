"""Faults 1 and 8, trainer side: bad input to `sacscale train` and too little disk space.

Guarantee: rejected before anything starts (no process, no log directory, no shared
memory), within a few seconds, exit status 1 (2 for what argparse itself refuses), and
the message names the flag (and, for disk space, the number of MB needed).

The pipeline's side of fault 1 (unknown preset, repeats/iterations < 1, an `order` entry
without a run configuration, overlapping / absent / miscounted CPU pools, all named by
their config key before any rule runs) is tested in tests/workflow/test_runplan.py and
tests/workflow/test_workflow_config.py.
"""

import os
import shutil
import time

import pytest
from faultkit import record, shm_entries

from sacscale.cli import main

CPUS = sorted(os.sched_getaffinity(0))
SMALL = ["--num-envs", "8", "--batch-size", "32", "--iterations", "2", "--replay-per-env", "16",
         "--extra", '{"learning_starts": 64, "actor_hidden": [32], "critic_hidden": [32], "num_atoms": 11}']


def run_cli(tmp_path, capsys, *args):
    """`sacscale train` in this process; returns (exit status, stderr, seconds)."""
    t0 = time.monotonic()
    code = main(["train", *SMALL, "--log-dir", str(tmp_path / "run"), *args])
    seconds = time.monotonic() - t0
    err = capsys.readouterr().err
    assert not (tmp_path / "run").exists(), "the log directory was created before the checks passed"
    assert not {n for n in shm_entries() if n.startswith(f"sacscale_{os.getpid()}_")}  # this job's prefix
    return code, err, seconds


@pytest.mark.parametrize(
    "args, message",
    [
        (["--iterations", "0"], "--iterations must be positive, got 0"),
        (["--iterations", "-5"], "--iterations must be positive, got -5"),
        (["--num-envs", "0"], "--num-envs must be positive"),
        (["--batch-size", "-1"], "--batch-size must be positive"),
        (["--replay-per-env", "0"], "--replay-per-env must be positive"),
        (["--log-every", "0"], "--log-every must be positive"),
        (["--num-actor-updates", "9"], "--num-actor-updates must be in [0, --num-critic-updates]"),
        (["--timeout-s", "0"], "--timeout-s must be a positive number of seconds"),
        (["--timeout-s", "nan"], "--timeout-s must be a positive number of seconds"),
        (["--sim-threads", "-1"], "--sim-threads must be >= 0"),
        (["--grad-sync", "sometimes"], "--grad-sync must be auto, on or off"),
        (["--devices", "gpu0"], "--devices: 'gpu0' is neither 'cpu' nor a CUDA device index"),
        (["--devices", "cpu,0"], "--devices: mix of CPU and CUDA ranks"),
        (["--model", "/no/such/model.mjb"], "--model /no/such/model.mjb: no such file"),
        (["--extra", '{"no_such_knob": 1}'], "--extra: unknown learner setting(s) ['no_such_knob']"),
        (["--extra", "[1, 2]"], "--extra must be a JSON object, got list"),
        (["--extra", '{"critic_updates": 0}'], "learner settings: critic_updates must be >= 1"),
        (["--devices", "cpu,cpu", "--collector-cpu-ids", f"{CPUS[0]};{CPUS[0]}"],
         f"--collector-cpu-ids: the pools of ranks 0 and 1 overlap on CPUs [{CPUS[0]}]"),
        (["--devices", "cpu,cpu", "--collector-cpu-ids", f"{CPUS[0]};4097"],
         "--collector-cpu-ids, rank 1 ('4097'): CPU(s) 4097 not available"),
        (["--devices", "cpu,cpu", "--collector-cpu-ids", f"{CPUS[0]}"],
         "--collector-cpu-ids: 1 CPU list(s) given for 2 rank(s)"),
        (["--devices", "cpu", "--collector-cpu-ids", "0;1"], "--collector-cpu-ids: 2 CPU list(s) given for 1 rank(s)"),
        (["--devices", "cpu", "--collector-cpu-ids", f"{CPUS[0]}", "--learner-cpu-ids", f"{CPUS[0]}"],
         f"--learner-cpu-ids, rank 0: CPUs [{CPUS[0]}] are in a collector pool"),
        (["--devices", "cpu", "--env-pipeline", "thirds"], "--env-pipeline must be halves or serial, got 'thirds'"),
        (["--devices", "cpu", "--num-envs", "1"], "--env-pipeline halves needs --num-envs >= 2"),
        (["--devices", "cpu", "--learner-cpu-ids", "4097"],
         "--learner-cpu-ids, rank 0 ('4097'): CPU(s) 4097 not available"),
        (["--devices", "cpu,cpu", "--learner-cpu-ids", f"{CPUS[0]};{CPUS[0]}"],
         f"--learner-cpu-ids: the learners of ranks 0 and 1 overlap on CPUs [{CPUS[0]}]"),
    ],
)
def test_bad_flag_is_rejected_before_anything_starts(tmp_path, capsys, args, message):
    code, err, seconds = run_cli(tmp_path, capsys, *args)
    record("bad input", args=args, exit_status=code, seconds=round(seconds, 2), message=err.strip())
    assert code == 1
    assert f"sacscale train: error: {message}" in err, err
    assert seconds < 10


def test_missing_cuda_device_is_rejected_before_anything_starts(tmp_path, capsys):
    import torch

    visible = torch.cuda.device_count() if torch.cuda.is_available() else 0
    code, err, _ = run_cli(tmp_path, capsys, "--devices", str(visible))
    assert code == 1
    assert f"needs {visible + 1} visible CUDA device(s), but {visible} are visible" in err, err


def test_malformed_extra_is_refused_by_the_parser(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--extra", "{not json", "--log-dir", str(tmp_path / "run")])
    assert exit_info.value.code == 2
    assert "argument --extra" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_too_little_disk_space_fails_early_with_the_number_needed(tmp_path, capsys):
    """Fault 8. The log directory's file system has F MB free; ask for 2F + 1."""
    free_mb = shutil.disk_usage(tmp_path).free / 2**20
    needed = 2 * free_mb + 1
    code, err, seconds = run_cli(tmp_path, capsys, "--min-free-mb", f"{needed:.1f}")
    record("disk space", exit_status=code, seconds=round(seconds, 2), message=err.strip())
    assert code == 1
    assert f"not enough free disk space for logs under {tmp_path / 'run'}" in err, err
    assert f"{needed:.1f} MB needed (--min-free-mb)" in err, err
    reported_free = float(err.split(": ")[-1].split(" MB free")[0])
    assert reported_free == pytest.approx(free_mb, rel=0.05, abs=50)
    assert seconds < 10


def test_negative_disk_requirement_is_rejected(tmp_path, capsys):
    code, err, _ = run_cli(tmp_path, capsys, "--min-free-mb", "-1")
    assert code == 1 and "--min-free-mb must be >= 0" in err
