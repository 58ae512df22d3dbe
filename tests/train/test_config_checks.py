"""Bad input to `sacscale train` fails early with a message naming the problem."""

import pytest

from sacscale.cli import main
from sacscale.train import TrainConfig, TrainingError, sac_config
from sacscale.train.preflight import check_devices, check_disk


@pytest.mark.parametrize(
    "devices, message",
    [("gpu0", "neither 'cpu' nor a CUDA device index"), ("cpu,0", "mix of CPU and CUDA"),
     ("0,0", "share a CUDA device .* add --allreduce between-graphs"), ("", "empty device list")],
)
def test_bad_device_lists(devices, message):
    with pytest.raises(TrainingError, match=message):
        TrainConfig(devices=devices).validate()


@pytest.mark.parametrize("options", [{"allreduce": "between-graphs"}, {"grad_sync": "off"}])
def test_ranks_may_share_a_gpu_with_the_sync_between_graphs_or_off(options):
    cfg = TrainConfig(devices="0,0,1", **options)
    cfg.validate()  # no device needed: check_devices runs later, at the start of a job
    assert cfg.device_list() == ["cuda:0", "cuda:0", "cuda:1"]


def test_backend_is_gloo_wherever_ranks_share_a_gpu():
    from sacscale.parallel.launch import backend_for

    assert backend_for(["cuda:0", "cuda:1"]) == "nccl"
    assert backend_for(["cuda:0", "cuda:0"]) == "gloo"
    assert backend_for(["cuda:0", "cuda:1", "cuda:1"]) == "gloo"
    assert backend_for(["cpu", "cpu"]) == "gloo"


def test_missing_gpu_is_named():
    import torch

    wanted = torch.cuda.device_count() + 1
    with pytest.raises(TrainingError, match=f"needs {wanted} visible CUDA device"):
        check_devices([f"cuda:{wanted - 1}"])


@pytest.mark.parametrize("field", ["num_envs", "batch_size", "iterations", "log_every"])
def test_non_positive_sizes_are_named(field):
    with pytest.raises(TrainingError, match=f"--{field.replace('_', '-')} must be positive"):
        TrainConfig(**{field: 0}).validate()


def test_disk_space_check_names_the_need(tmp_path):
    with pytest.raises(TrainingError, match=r"MB free, 1e\+12|MB needed"):
        check_disk(tmp_path / "run", min_free_mb=1e12)
    check_disk(tmp_path / "run", min_free_mb=1)  # plenty free: no error


def test_unknown_learner_override_is_named():
    with pytest.raises(TrainingError, match="unknown learner setting.*no_such_knob"):
        sac_config(TrainConfig(extra={"no_such_knob": 1}))


def test_reference_schedule_is_8_critic_2_actor():
    sac = sac_config(TrainConfig())
    assert sac.critic_updates == 8 and sac.actor_update_at == (0, 4) and sac.batch_size == 8192


def test_cli_reports_bad_pools_before_starting(tmp_path, capsys):
    code = main(["train", "--devices", "cpu", "--collector-cpu-ids", "0;1", "--log-dir", str(tmp_path / "r")])
    assert code == 2  # a usage error
    assert "2 CPU list(s) given for 1 rank(s)" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()  # nothing written before the checks pass


def test_losses_are_compiled_only_with_the_sync_inside_the_graph():
    from sacscale.train import compiles_losses

    assert compiles_losses(TrainConfig(devices="0"))
    assert not compiles_losses(TrainConfig(devices="0", allreduce="between-graphs"))
    assert not compiles_losses(TrainConfig(devices="0", compile=False))


def test_a_checkpoint_whose_pickle_would_inflate_is_refused_unread(tmp_path):
    import zipfile

    from sacscale.train.checkpoint import read_checkpoint

    path = tmp_path / "final.pt"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("archive/data.pkl", "w", force_zip64=True) as member:
            member.write(b"(" * 17 * 2**20)
    assert path.stat().st_size < 100_000
    with pytest.raises(TrainingError, match="pickled part would inflate to 17,825,792 bytes"):
        read_checkpoint(path)


@pytest.mark.parametrize("devices, message", [
    ("\u0660", "'\u0660' is neither 'cpu' nor a CUDA device index"),  # isdigit(): read as device 0
    ("cuda:\u00b2", "'cuda:\u00b2' is neither"),  # isdigit() too; torch then failed on it
    (",".join(["cpu"] * 65), "65 ranks, more than 64"),  # started 65 processes on any machine
])
def test_a_device_list_no_machine_has_is_refused(devices, message):
    """Seventh pass: device indices are ASCII digits and the ranks are at most the plan's 64."""
    with pytest.raises(TrainingError, match=message):
        TrainConfig(devices=devices).device_list()
