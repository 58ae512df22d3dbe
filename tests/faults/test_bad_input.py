"""Faults 1 and 8, trainer side: bad input to `sacscale train` and too little disk space.

Guarantee: rejected before anything starts (no process, no log directory, no shared
memory), within a few seconds, and the message names the flag (and, for disk space, the
number of MB needed). A bad option value is a usage error, exit status 2 (argparse's own,
for a value outside an option's listed choices); what the machine or the file system
refuses (a CUDA device that is not there, a used log directory, too little disk) exits 1.

The pipeline's side of fault 1 (unknown preset, repeats/iterations < 1, an `order` entry
without a run configuration, overlapping / absent / miscounted CPU pools, all named by
their config key before any rule runs) is tested in tests/workflow/test_runplan.py and
tests/workflow/test_workflow_config.py.
"""

import json
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
    try:
        code = main(["train", *SMALL, "--log-dir", str(tmp_path / "run"), *args])
    except SystemExit as exc:  # argparse refused it
        code = exc.code
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
        (["--timeout-s", "0"], "--timeout-s must be a number of seconds in (0, 2592000] (30 days), got 0.0"),
        (["--timeout-s", "nan"], "--timeout-s must be a number of seconds in (0, 2592000] (30 days), got nan"),
        (["--sim-threads", "-1"], "--sim-threads must be in [0, 8192] (0: the pool's size), got -1"),
        (["--sim-threads", "99999"], "--sim-threads must be in [0, 8192] (0: the pool's size), got 99999"),
        (["--devices", "gpu0"], "--devices: 'gpu0' is neither 'cpu' nor a CUDA device index"),
        (["--devices", "cpu,0"], "--devices: mix of CPU and CUDA ranks"),
        (["--model", "/no/such/model.mjb"], "--model /no/such/model.mjb: no such file"),
        (["--extra", '{"no_such_knob": 1}'], "--extra: unknown learner setting(s) ['no_such_knob']"),
        (["--extra", "[1, 2]"], "--extra must be a JSON object, got list"),
        (["--extra", '{"critic_updates": 0}'], "--extra critic_updates: set by the trainer's own option "
                                               "--num-critic-updates"),
        (["--devices", "cpu,cpu", "--collector-cpu-ids", f"{CPUS[0]};{CPUS[0]}"],
         f"--collector-cpu-ids: the pools of ranks 0 and 1 overlap on CPUs [{CPUS[0]}]"),
        (["--devices", "cpu,cpu", "--collector-cpu-ids", f"{CPUS[0]};4097"],
         "--collector-cpu-ids, rank 1 ('4097'): CPU(s) 4097 not available"),
        (["--devices", "cpu,cpu", "--collector-cpu-ids", f"{CPUS[0]}"],
         "--collector-cpu-ids: 1 CPU list(s) given for 2 rank(s)"),
        (["--devices", "cpu", "--collector-cpu-ids", "0;1"], "--collector-cpu-ids: 2 CPU list(s) given for 1 rank(s)"),
        (["--devices", "cpu", "--collector-cpu-ids", f"{CPUS[0]}", "--learner-cpu-ids", f"{CPUS[0]}"],
         f"--learner-cpu-ids, rank 0: CPUs [{CPUS[0]}] are in a collector pool"),
        (["--devices", "cpu", "--num-envs", "1"], "--env-pipeline halves needs --num-envs >= 2"),
        (["--devices", "cpu", "--learner-cpu-ids", "4097"],
         "--learner-cpu-ids, rank 0 ('4097'): CPU(s) 4097 not available"),
        (["--devices", "cpu,cpu", "--learner-cpu-ids", f"{CPUS[0]};{CPUS[0]}"],
         f"--learner-cpu-ids: the learners of ranks 0 and 1 overlap on CPUs [{CPUS[0]}]"),
        # sizes against each other, types of every learner setting, seeds
        (["--batch-size", "4096"],
         "--batch-size 4096 is larger than the replay: the replay holds 128 rows (--replay-per-env 16 x --num-envs 8)"),
        (["--extra", '{"learning_starts": 1000}'],
         "learning starts at 1000 rows (--extra learning_starts) but the replay holds 128"),
        (["--extra", '{"gamma": "x"}'], "--extra gamma must be a finite number, got 'x'"),
        (["--extra", '{"lr": "fast"}'], "--extra lr must be a finite number, got 'fast'"),
        (["--extra", '{"lr": -1}'], "--extra lr must be in [1e-06, 1], got -1"),
        (["--extra", '{"gamma": 1.5}'], "--extra gamma must be in [0, 1], got 1.5"),
        (["--extra", '{"num_atoms": 11.5}'], "--extra num_atoms must be an integer, got 11.5"),
        (["--extra", '{"actor_hidden": "fast"}'], "--extra actor_hidden must be a list of integers, got 'fast'"),
        (["--extra", '{"betas": [0.9]}'], "--extra betas must be a list of 2 numbers, got [0.9]"),
        (["--extra", '{"compile_on_cpu": "yes"}'], "--extra compile_on_cpu must be true or false, got 'yes'"),
        (["--extra", '{"amp_dtype": 16}'], "--extra amp_dtype must be a string, got 16"),
        (["--seed", "-1"], "--seed must be an integer in [0, "),
        (["--seed", str(2**40)], "--seed must be an integer in [0, "),
        (["--model", "/etc/passwd"], "--model /etc/passwd: not a loadable MuJoCo model (MJCF)"),
        # a folder is no model file (it was called "no such file"); a negative period checkpointed
        # every iteration (0 is documented: only at the end); a CPU named twice is a slip
        (["--model", "/etc"], "--model /etc: not a plain file (a folder), not a model file"),
        (["--devices", "cpu,,cpu"], "--devices cpu,,cpu: an empty item; name each device once (e.g. cpu or 0,1)"),
        (["--checkpoint-every", "-1"], "--checkpoint-every must be >= 0 (0: only at the end), got -1"),
        (["--devices", "cpu", "--learner-cpu-ids", f"{CPUS[0]},{CPUS[0]}"],
         f"--learner-cpu-ids, rank 0 ('{CPUS[0]},{CPUS[0]}'): CPU(s) {CPUS[0]} named twice in one list; "
         "name each CPU once"),
        (["--devices", "cpu", "--collector-cpu-ids", f"{CPUS[0]}-{CPUS[-1]},{CPUS[-1]}"],
         f"--collector-cpu-ids, rank 0 ('{CPUS[0]}-{CPUS[-1]},{CPUS[-1]}'): CPU(s) {CPUS[-1]} named twice in one "
         "list; name each CPU once"),
    ],
)
def test_bad_flag_is_rejected_before_anything_starts(tmp_path, capsys, args, message):
    code, err, seconds = run_cli(tmp_path, capsys, *args)
    record("bad input", args=args, exit_status=code, seconds=round(seconds, 2), message=err.strip())
    assert code == 2
    assert f"sacscale train: error: {message}" in err, err
    assert seconds < 10


@pytest.mark.parametrize("args, choices", [
    (["--grad-sync", "sometimes"], "'auto', 'on', 'off'"),
    (["--allreduce", "eager"], "'in-graph', 'between-graphs'"),
    (["--env-pipeline", "thirds"], "'halves', 'serial'"),
    (["--tilt-obs", "body"], "'world', 'torso'"),
])
def test_value_outside_the_listed_choices_is_a_usage_error(tmp_path, capsys, args, choices):
    code, err, _ = run_cli(tmp_path, capsys, *args)
    assert code == 2
    assert f"argument {args[0]}: invalid choice: '{args[1]}' (choose from {choices})" in err, err


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
    assert code == 2 and "--min-free-mb must be in [0, 1073741824]" in err


@pytest.mark.parametrize("value", ["inf", "1e309", "1e12"])
def test_infinite_disk_requirement_is_rejected(tmp_path, capsys, value):
    """inf passed `>= 0` and failed later, after the imports, as `inf MB needed` (exit 1); a
    finite value past any disk (1e12 MB, an exabyte) likewise."""
    code, err, _ = run_cli(tmp_path, capsys, "--min-free-mb", value)
    assert code == 2 and "--min-free-mb must be in [0, 1073741824]" in err, err


# ---------------------------------------------------------------------------------------
# a bad model file, a reused log directory, too little shared memory


@pytest.mark.parametrize("damage", ["truncated", "empty", "not_the_task"])
def test_bad_model_file_is_named_before_any_collector_starts(tmp_path, capsys, g1_mjb, damage):
    bad = tmp_path / "bad.mjb"
    if damage == "truncated":
        bad.write_bytes(g1_mjb.read_bytes()[: g1_mjb.stat().st_size // 2])
        message = f"--model {bad}: not a loadable compiled MuJoCo model (.mjb) (truncated or another format?)"
    elif damage == "empty":
        bad.write_bytes(b"")
        message = f"--model {bad}: empty file"
    else:
        import mujoco

        model = mujoco.MjModel.from_xml_string("<mujoco><worldbody><body><freejoint/><geom size='.1'/></body>"
                                               "</worldbody></mujoco>")
        mujoco.mj_saveModel(model, str(bad), None)
        message = f"--model {bad}: loads, but is not the G1 walking task's model"
    code, err, seconds = run_cli(tmp_path, capsys, "--model", str(bad))
    record("bad model", damage=damage, exit_status=code, seconds=round(seconds, 2), message=err.strip())
    assert code == 2  # the --model option's file: an input error
    assert f"sacscale train: error: {message}" in err, err
    assert seconds < 10


@pytest.mark.parametrize("missing", ["package", "folder"])
def test_no_model_and_no_asset_files_is_named_before_any_collector_starts(tmp_path, capsys, monkeypatch, missing):
    """Without --model every collector builds the model from the G1's asset files: where
    they are not installed, one line says so (each collector printed a traceback)."""
    from sacscale.task import g1_model

    if missing == "package":
        monkeypatch.delenv("SACSCALE_G1_ASSETS", raising=False)
        monkeypatch.setattr(g1_model, "ASSET_PACKAGE", "sacscale_no_such_asset_package")
        named = "the asset package sacscale_no_such_asset_package is not installed here"
    else:
        monkeypatch.setenv("SACSCALE_G1_ASSETS", str(tmp_path / "nowhere"))
        named = f"$SACSCALE_G1_ASSETS={tmp_path / 'nowhere'}: no g1.xml there"
    code, err, _ = run_cli(tmp_path, capsys)
    assert code == 2
    line, = err.strip().splitlines()
    assert line.startswith("sacscale train: error: no --model given, and the task's model cannot be built here: ")
    assert named in line and "or pass --model with a compiled model" in line, line


@pytest.mark.parametrize("through", ["", "link"])
def test_a_log_dir_in_the_kernels_file_system_is_named_not_called_a_full_disk(tmp_path, capsys, through):
    """Through a link of one's own (`plink -> /proc/self/fd`) it was `nothing can be made in
    .../plink (No such file or directory)`, exit 1: the folder was there, the reason unsaid."""
    log_dir = "/proc/sacscale-run"
    if through:
        os.symlink("/proc/self/fd", tmp_path / "plink")
        log_dir = str(tmp_path / "plink" / "x")
    code, err, _ = run_cli(tmp_path, capsys, "--log-dir", log_dir)
    assert code == 2
    line, = err.strip().splitlines()
    assert line == (f"sacscale train: error: argument --log-dir: {log_dir} leads into the kernel's file system "
                    "(/proc, /sys or the devices'), where no run folder can be made; name a folder of your own"), line


@pytest.mark.parametrize("spelling", ["proc_self_cwd", "own_link_to_proc_self"])
def test_a_log_dir_named_through_proc_self_cwd_is_the_folder_it_leads_to(tmp_path, capsys, monkeypatch, spelling):
    """`--log-dir /proc/self/cwd/tl1` was refused as leading into the kernel's file system,
    though it is <cwd>/tl1, while a link of one's own to /proc/self followed by cwd/tl2 was
    trained into: both spellings now get the folder's own answer (here: not empty)."""
    used = tmp_path / "run"
    (used / "tb").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    if spelling == "proc_self_cwd":
        log_dir = "/proc/self/cwd/run"
    else:
        os.symlink("/proc/self", tmp_path / "myproc")
        log_dir = str(tmp_path / "myproc" / "cwd" / "run")
    try:
        code = main(["train", *SMALL, "--log-dir", log_dir])
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert code == 1 and err.startswith(f"sacscale train: error: --log-dir {log_dir} is not empty (it holds tb): "), err
    assert os.listdir(used) == ["tb"]


def test_reused_log_dir_is_refused_and_left_as_it_was(tmp_path, capsys):
    used = tmp_path / "run"
    (used / "tb" / "rank0").mkdir(parents=True)
    (used / "train_meta.json").write_text("{}")
    before = sorted(str(p) for p in used.rglob("*"))
    t0 = time.monotonic()
    code = main(["train", *SMALL, "--log-dir", str(used)])
    err = capsys.readouterr().err
    record("reused log dir", exit_status=code, seconds=round(time.monotonic() - t0, 2), message=err.strip())
    assert code == 1
    assert f"sacscale train: error: --log-dir {used} is not empty (it holds tb, train_meta.json)" in err, err
    assert sorted(str(p) for p in used.rglob("*")) == before
    assert (used / "train_meta.json").read_text() == "{}"


def test_log_dir_check_allows_new_empty_or_caller_log_only(tmp_path):
    from sacscale.checks import InputError, _check_log_dir

    _check_log_dir(tmp_path / "new")
    (tmp_path / "empty").mkdir()
    _check_log_dir(tmp_path / "empty")
    (tmp_path / "wrapped").mkdir()
    (tmp_path / "wrapped" / "train.log").write_text("the run wrapper's tee\n")
    _check_log_dir(tmp_path / "wrapped")
    (tmp_path / "file").write_text("")
    with pytest.raises(InputError, match="exists and is not a directory"):
        _check_log_dir(tmp_path / "file")
    with pytest.raises(InputError, match="not a run directory"):
        _check_log_dir(tmp_path / "empty", resume=True)
    (tmp_path / "empty" / "train_meta.json").write_text("{}")
    _check_log_dir(tmp_path / "empty", resume=True)  # the allowed way to continue a run


def test_two_runs_claiming_one_log_dir_at_once_the_second_is_refused(tmp_path):
    """The checks cannot see a run started at the same instant; the first write of
    train_meta.json is exclusive, so only one of them claims the directory."""
    from sacscale.train import TrainingError
    from sacscale.train.record import atomic_json as _atomic_json

    path = tmp_path / "train_meta.json"
    _atomic_json(path, {"status": "running", "who": 1}, exclusive=True)
    with pytest.raises(TrainingError, match="another run claimed it first"):
        _atomic_json(path, {"status": "running", "who": 2}, exclusive=True)
    import json

    assert json.loads(path.read_text())["who"] == 1
    assert [p.name for p in tmp_path.iterdir()] == ["train_meta.json"]  # no temporary file left


def test_too_little_shared_memory_is_named_before_anything_starts(tmp_path, capsys, monkeypatch):
    from sacscale.collect import shm

    monkeypatch.setattr(shm, "shm_free_bytes", lambda: 2**20)  # /dev/shm with 1 MB free
    code, err, _ = run_cli(tmp_path, capsys, "--num-envs", "2048", "--batch-size", "32")
    assert code == 1
    assert "sacscale train: error: --num-envs 2048: the shared-memory blocks of 1 rank(s) need" in err, err
    assert "/dev/shm has 1.0 MB free" in err


def test_a_replay_larger_than_the_machines_memory_is_named_before_the_run(tmp_path, capsys):
    """A replay no machine can hold failed in torch's allocator once the job had started,
    naming no option; now the options are named before anything is written (exit 1: it
    depends on this machine, like the shared-memory check)."""
    code, err, _ = run_cli(tmp_path, capsys, "--num-envs", "1048576", "--replay-per-env", "1000000")
    assert code == 1
    assert err.startswith("sacscale train: error: --num-envs 1048576 x --replay-per-env 1000000: the replay of 1 "
                          "rank(s) on the CPU needs 1,676,757.8 GiB (1,048,576,000,000 rows of 1717 bytes a rank), "
                          "more than this machine's "), err
    assert err.count("\n") == 1


@pytest.mark.parametrize("extra, says", [
    ('{"compile_mode": "x"}', "--extra compile_mode must be 'default' or 'max-autotune-no-cudagraphs' (torch's other "
                              "modes turn on Inductor's own CUDA graphs, which conflict with the learner's "
                              "whole-iteration capture), got 'x'"),
    ('{"capture_error_mode": "zz"}', "--extra capture_error_mode must be 'global', 'thread_local' or 'relaxed', "
                                     "got 'zz'"),
    ('{"log_std_max": -10}', "learner settings: need log_std_min < log_std_max, got -5.0 and -10"),
])
def test_learner_settings_used_only_on_a_gpu_or_out_of_order_are_named_on_any_machine(extra, says):
    """A compile or capture mode torch does not know failed only on a GPU, after the run had
    started; a log-std range upside down trained a policy of constant spread."""
    from sacscale.checks import InputError
    from sacscale.train.config import TrainConfig, TrainingError, sac_config

    with pytest.raises((InputError, TrainingError)) as info:
        sac_config(TrainConfig(devices="cpu", extra=json.loads(extra)))
    assert str(info.value) == says
