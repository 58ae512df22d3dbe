"""A checkpoint's policy tensor (`actor_flat`) and task settings are held to what `sacscale
train` writes: one dense float32 CPU vector, finite, and of the task only `tilt_obs`.
A sparse, meta or quantized vector ended in torch's error as an "unexpected" line naming no
file (exit 1); an int, bool, complex, half or 2-D one and unknown task keys were evaluated
(exit 0). Now `evaluate` and `render` refuse each in one line naming the file and the
field, exit 2, before anything is written."""

import warnings

import pytest
from checkpoint_refusals import one_checkpoint_refusal
import torch

from sacscale.cli import main
from sacscale.eval import gl_backend as GL
from sacscale.eval.evaluate import load_checkpoint
from sacscale.learn.networks import Actor

WRITTEN = dict(obs_dim=98, action_dim=29, hidden=[32], log_std_min=-5.0, log_std_max=0.0, mean_clip=10.0,
               obs_norm=False)
FAST = ["--envs-per-command", "1", "--seconds", "1.5", "--settle-s", "0.5", "--threads", "2"]


def _quantized(flat):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's deprecation of quantized tensors: made here on purpose
        return torch.quantize_per_tensor(flat, 0.1, 0, torch.qint8)


# (how the crafted checkpoint's vector or task differs, what the one line must say after the file's name)
CRAFTED = {
    "sparse": (lambda c: c.__setitem__("actor_flat", c["actor_flat"].to_sparse()),
               "actor_flat is a tensor of layout sparse_coo, expected a dense one"),
    "meta": (lambda c: c.__setitem__("actor_flat", torch.empty(c["actor_flat"].shape, device="meta")),
             "actor_flat is a tensor on the meta device, expected one on the CPU"),
    "quantized": (lambda c: c.__setitem__("actor_flat", _quantized(c["actor_flat"])),
                  "actor_flat is a quantized tensor, expected a dense one"),
    "int32": (lambda c: c.__setitem__("actor_flat", c["actor_flat"].int()), "actor_flat is int32, expected float32"),
    "bool": (lambda c: c.__setitem__("actor_flat", c["actor_flat"] > 0), "actor_flat is bool, expected float32"),
    "complex64": (lambda c: c.__setitem__("actor_flat", c["actor_flat"].to(torch.complex64)),
                  "actor_flat is complex64, expected float32"),
    "float16": (lambda c: c.__setitem__("actor_flat", c["actor_flat"].half()),
                "actor_flat is float16, expected float32"),
    "two_dimensional": (lambda c: c.__setitem__("actor_flat", c["actor_flat"].reshape(2, -1)),
                        "actor_flat has shape (2, "),
    "inf": (lambda c: c["actor_flat"].__setitem__(3, float("inf")), "actor_flat holds NaN or inf"),
    "task_key": (lambda c: c["task"].__setitem__("x", 1), "task holds 'x', which is no setting the trainer writes"),
    "task_int_key": (lambda c: c["task"].__setitem__(1, 2), "task holds 1, which is no setting the trainer writes"),
}


def make_checkpoint(path, edit=None):
    """A checkpoint as the trainer writes it (an even number of weights), then `edit` made to it."""
    torch.manual_seed(0)
    ckpt = {"format": "sacscale-checkpoint", "version": 2, "actor_kwargs": dict(WRITTEN),
            "actor_flat": Actor(**WRITTEN).flat_parameters().detach().clone(), "task": {"tilt_obs": "world"},
            "iteration": 3, "env_steps": 99, "total_env_steps": 99, "model_sha256": None, "train_config": {}}
    assert ckpt["actor_flat"].dtype == torch.float32 and ckpt["actor_flat"].numel() % 2 == 0
    if edit:
        edit(ckpt)
    torch.save(ckpt, path)
    return path


@pytest.mark.parametrize("case", CRAFTED)
def test_evaluate_refuses_a_policy_tensor_the_trainer_never_writes(tmp_path, capsys, model_file, case):
    edit, message = CRAFTED[case]
    path = make_checkpoint(tmp_path / "crafted.pt", edit)
    out = tmp_path / "e.json"
    code = main(["evaluate", str(path), "--output", str(out), "--model", str(model_file), *FAST])
    one_checkpoint_refusal(capsys, code, "evaluate", path, message)
    assert not out.exists()


@pytest.fixture
def gl_checked_only(monkeypatch):
    """A render that gets as far as reading its checkpoint on a machine without GL libraries."""
    monkeypatch.setenv("MUJOCO_GL", "egl")
    monkeypatch.setenv("PYOPENGL_PLATFORM", "egl")
    monkeypatch.setattr(GL, "library_problem", lambda backend: None)


@pytest.mark.parametrize("case", ["sparse", "meta", "int32", "task_key"])
def test_render_refuses_a_policy_tensor_the_trainer_never_writes(tmp_path, capsys, gl_checked_only, case):
    edit, message = CRAFTED[case]
    path = make_checkpoint(tmp_path / "crafted.pt", edit)
    videos = tmp_path / "videos"
    videos.mkdir()
    code = main(["render", str(path), "--output", str(videos / "walk.webp"), "--seconds", "0.2",
                 "--width", "32", "--height", "24", "--fps", "10"])
    one_checkpoint_refusal(capsys, code, "render", path, message)
    assert list(videos.iterdir()) == []


def test_the_checkpoint_the_trainer_writes_passes(tmp_path):
    ckpt = load_checkpoint(make_checkpoint(tmp_path / "written.pt"))
    assert ckpt["actor_flat"].dtype == torch.float32 and ckpt["task"] == {"tilt_obs": "world"}
