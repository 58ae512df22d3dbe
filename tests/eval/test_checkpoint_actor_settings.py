"""A checkpoint's actor settings (`actor_kwargs`) are held to what `sacscale train` writes:
`evaluate` and `render` refuse any other in one line naming the file and the key, exit 2,
before a network is built (no torch warning, no IndexError, no policy evaluated with a NaN
or negative bound) and before anything is written."""

import math
import warnings

import pytest
from checkpoint_refusals import one_checkpoint_refusal
import torch

from sacscale.checks import LOG_STD_BOUNDS, MAX_HIDDEN, MAX_LAYERS
from sacscale.cli import main
from sacscale.eval import gl_backend as GL
from sacscale.eval.actor_settings import TRAINER_NAMES, actor_arguments, actor_settings_problem
from sacscale.learn.networks import Actor

WRITTEN = dict(obs_dim=98, action_dim=29, hidden=[32], log_std_min=-5.0, log_std_max=0.0, mean_clip=10.0,
               obs_norm=False)
FAST = ["--envs-per-command", "1", "--seconds", "1.5", "--settle-s", "0.5", "--threads", "2"]

# (changed settings, what the one line must say after the file's name)
CRAFTED = [
    ({"hidden": []}, "actor_kwargs.hidden is [], must be a list of 1 to 16 sizes in [1, 16384]"),
    ({"hidden": [0]}, "actor_kwargs.hidden is [0], must be a list of 1 to 16 sizes"),
    ({"hidden": [32, -8]}, "actor_kwargs.hidden is [32, -8], must be a list of 1 to 16 sizes"),
    ({"hidden": [MAX_HIDDEN + 1]}, f"actor_kwargs.hidden is [{MAX_HIDDEN + 1}], must be a list of 1 to 16 sizes"),
    ({"hidden": [32] * (MAX_LAYERS + 1)}, "actor_kwargs.hidden is [32, 32,"),
    ({"hidden": [32.0]}, "actor_kwargs.hidden is [32.0], must be a list of integers"),
    ({"hidden": [True]}, "actor_kwargs.hidden is [True], must be a list of integers"),
    ({"hidden": "512"}, "actor_kwargs.hidden is '512', must be a list of integers"),
    ({"hidden": {"x": 1}}, "actor_kwargs.hidden is {'x': 1}, must be a list of integers"),
    ({"log_std_min": math.nan}, "actor_kwargs.log_std_min is nan, must be a finite number"),
    ({"log_std_max": math.inf}, "actor_kwargs.log_std_max is inf, must be a finite number"),
    ({"log_std_min": -100.0}, "actor_kwargs.log_std_min is -100.0, must be in [-20.0, 2.0]"),
    ({"log_std_min": 0.0, "log_std_max": -1.0}, "actor_kwargs.log_std_min is 0.0, expected below log_std_max (-1.0)"),
    ({"log_std_min": 1.5}, "actor_kwargs.log_std_min is 1.5, expected below log_std_max (0.0)"),
    ({"mean_clip": -1.0}, "actor_kwargs.mean_clip is -1.0, must be in [0.1, 100]"),
    ({"mean_clip": math.nan}, "actor_kwargs.mean_clip is nan, must be a finite number"),
    ({"mean_clip": 0.0}, "actor_kwargs.mean_clip is 0.0, must be in [0.1, 100]"),
    ({"obs_norm": "yes"}, "actor_kwargs.obs_norm is 'yes', must be true or false"),
    ({"dropout": 0.1}, "actor_kwargs holds 'dropout', which is no setting of the actor"),
    ({"action_dim": 28}, "actor_kwargs.action_dim is 28, must be the task's 29"),
    ({"obs_dim": 97}, "actor_kwargs.obs_dim is 97, must be the task's 98"),
]
IDS = ["hidden_empty", "hidden_zero", "hidden_negative", "hidden_too_wide", "hidden_too_deep", "hidden_float",
       "hidden_bool", "hidden_string", "hidden_object", "log_std_min_nan", "log_std_max_inf", "log_std_min_low",
       "log_std_order", "log_std_min_default_max", "mean_clip_negative", "mean_clip_nan", "mean_clip_zero",
       "obs_norm_string", "unknown_key", "action_dim_other", "obs_dim_other"]


def make_checkpoint(path, **changes):
    """A checkpoint as the trainer writes it, its weights sized for WRITTEN, then `changes`
    made to its actor settings."""
    torch.manual_seed(0)
    actor = Actor(**WRITTEN)
    ckpt = {"format": "sacscale-checkpoint", "version": 2, "actor_kwargs": {**WRITTEN, **changes},
            "actor_flat": actor.flat_parameters(), "task": {"tilt_obs": "world"}, "iteration": 3,
            "env_steps": 99, "total_env_steps": 99, "model_sha256": None, "train_config": {}}
    torch.save(ckpt, path)
    return path


@pytest.mark.parametrize("changes, message", CRAFTED, ids=IDS)
def test_evaluate_refuses_settings_the_trainer_never_writes(tmp_path, capsys, model_file, changes, message):
    path = make_checkpoint(tmp_path / "crafted.pt", **changes)
    out = tmp_path / "e.json"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch's warning for a zero width came before the refusal
        code = main(["evaluate", str(path), "--output", str(out), "--model", str(model_file), *FAST])
    one_checkpoint_refusal(capsys, code, "evaluate", path, message)
    assert not out.exists()


@pytest.fixture
def gl_checked_only(monkeypatch):
    """A render that gets as far as reading its checkpoint on a machine without GL libraries:
    the refusal comes before any context is opened."""
    monkeypatch.setenv("MUJOCO_GL", "egl")
    monkeypatch.setenv("PYOPENGL_PLATFORM", "egl")
    monkeypatch.setattr(GL, "library_problem", lambda backend: None)


@pytest.mark.parametrize("changes, message", [CRAFTED[i] for i in (0, 1, 9, 14, 15)],
                         ids=[IDS[i] for i in (0, 1, 9, 14, 15)])
def test_render_refuses_settings_the_trainer_never_writes(tmp_path, capsys, gl_checked_only, changes, message):
    path = make_checkpoint(tmp_path / "crafted.pt", **changes)
    videos = tmp_path / "videos"
    videos.mkdir()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        code = main(["render", str(path), "--output", str(videos / "walk.webp"), "--seconds", "0.2",
                     "--width", "32", "--height", "24", "--fps", "10"])
    one_checkpoint_refusal(capsys, code, "render", path, message)
    assert list(videos.iterdir()) == []


def test_every_actor_argument_is_checked_by_the_trainers_rule():
    """Each argument is judged by the trainer's own rule for the setting it is built from, so a
    rule the trainer changes changes what evaluate takes with it."""
    from dataclasses import fields

    from sacscale.learn.config import SACConfig

    assert set(TRAINER_NAMES) == set(actor_arguments())
    assert set(TRAINER_NAMES.values()) <= {f.name for f in fields(SACConfig)}


def test_a_changed_trainer_rule_changes_what_evaluate_takes(monkeypatch):
    from sacscale import checks

    monkeypatch.setitem(checks._RANGES, "actor_hidden", (lambda v: len(v) == 1, "one layer"))
    problem = actor_settings_problem({**WRITTEN, "hidden": [32, 32]})
    assert problem == "actor_kwargs.hidden is [32, 32], must be one layer"


@pytest.mark.parametrize("kwargs", [
    WRITTEN,
    {**WRITTEN, "hidden": [512, 256, 128], "obs_norm": True},
    {**WRITTEN, "hidden": (MAX_HIDDEN,) * MAX_LAYERS, "log_std_min": LOG_STD_BOUNDS[0], "log_std_max": 2},
    {"obs_dim": 98, "action_dim": 29},  # settings left out take the actor's defaults
])
def test_settings_the_trainer_writes_pass(kwargs):
    assert actor_settings_problem(kwargs) is None


def test_a_long_value_is_shown_cut():
    problem = actor_settings_problem({**WRITTEN, "hidden": [0] * 10_000})
    assert problem.startswith("actor_kwargs.hidden is [0, 0,") and len(problem) < 200
