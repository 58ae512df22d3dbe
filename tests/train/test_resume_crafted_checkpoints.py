"""Crafted resume checkpoints and launcher variables: a
checkpoint of another shape ended in a KeyError, TypeError or AttributeError naming no
file; RANK/WORLD_SIZE/LOCAL_RANK/MASTER_PORT that are not numbers in `invalid literal for
int()`, exit 1, naming no variable (after train_meta.json was written)."""

import copy
import subprocess
import sys

import pytest
from resume_copies import crafted_copy
import torch

SMALL = '{"learning_starts": 32, "actor_hidden": [32], "critic_hidden": [32], "num_atoms": 11}'
ARGS = ["--devices", "cpu", "--num-envs", "8", "--batch-size", "32", "--log-every", "2", "--replay-per-env", "16",
        "--num-critic-updates", "1", "--num-actor-updates", "1", "--extra", SMALL, "--timeout-s", "120"]


def train(*argv, env=None):
    return subprocess.run([sys.executable, "-m", "sacscale.cli", "train", *map(str, argv)], capture_output=True,
                          text=True, timeout=300, env=env)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    run = tmp_path_factory.mktemp("resume10") / "run"
    done = train("--iterations", "4", *ARGS, "--log-dir", run)
    assert done.returncode == 0, done.stderr
    return run


def resumed_here(capsys, crafted, iterations):
    """`train --resume` refused in this process, which has torch loaded already: a fresh
    interpreter per case spent seconds importing torch and TensorBoard to refuse the same way.
    (exit status, stderr)"""
    from sacscale.cli import main

    code = main(["train", "--resume", str(crafted), "--iterations", str(iterations)])
    return code, capsys.readouterr().err


def _set(key, value):
    return lambda c: c.__setitem__(key, value)


def _set_config(key, value):
    return lambda c: c["train_config"].__setitem__(key, value)


@pytest.mark.parametrize("edit, says", [
    (lambda c: c.pop("train_config"), "its 'train_config' is missing"),
    (_set("train_config", [1, 2]), "its 'train_config' is list"),
    (_set("optimizers", None), "its 'optimizers' is NoneType"),
    (_set("iteration", "x"), "its 'iteration' is str"),
    (_set("world_size", 10**9), "its world_size 1000000000 is not 1..64"),
    (_set("total_env_steps", float("nan")), "its total_env_steps nan is not a finite count of steps"),
    (_set("total_env_steps", float("inf")), "its total_env_steps inf is not a finite count of steps"),
    (_set("total_env_steps", -5), "its total_env_steps -5 is not a finite count of steps"),
    (_set_config("num_envs", "8"), "its 'train_config.num_envs' is str"),
    (_set_config("devices", 0), "its 'train_config.devices' is int"),
    # the step counts of AdamW (one update of one critic, alpha and actor step): counts the trainer makes
    (lambda c: c["optimizers"]["critic"][0].__setitem__("step", torch.tensor(-1.0)),
     "optimizers.critic.0.step -1.0 is not a count of steps (a whole number >= 0)"),
    (lambda c: c["optimizers"]["actor"][0].__setitem__("step", torch.tensor(0.5)),
     "optimizers.actor.0.step 0.5 is not a count of steps (a whole number >= 0)"),
    (lambda c: c["optimizers"].pop("alpha"), "optimizers.alpha is missing (the learner has critic, alpha, actor)"),
    (lambda c: c["learner_state"]["log_alpha"].fill_(1e30),
     "learner_state.log_alpha 1e+30: alpha = exp(log_alpha) is not finite in float32 (log_alpha at most 88.72); its "
     "first update would diverge"),
    # the rank count: the ranks of the run's devices, each of which reads its own state
    (lambda c: c.update(world_size=2, total_env_steps=2 * c["total_env_steps"]),
     "its world_size 2 is not the 1 rank(s) of its devices cpu"),
    (_set_config("devices", "cpu,cpu"), "its world_size 1 is not the 2 rank(s) of its devices cpu,cpu"),
])
def test_a_resume_checkpoint_of_another_shape_is_named_with_its_field(run, tmp_path, capsys, edit, says):
    crafted = crafted_copy(run, tmp_path, edit)
    before = sorted(p.relative_to(crafted) for p in crafted.rglob("*"))
    code, err = resumed_here(capsys, crafted, 8)
    assert code == 2 and "Traceback" not in err, err
    assert err.strip().splitlines() == [
        f"sacscale train: error: --resume: {crafted}/checkpoints/final.pt: not a checkpoint the trainer wrote ({says})"]
    assert sorted(p.relative_to(crafted) for p in crafted.rglob("*")) == before


@pytest.mark.parametrize("edit, says", [
    (_set_config("num_envs", -8), "--num-envs must be positive, got -8"),
    (lambda c: c["train_config"]["extra"].__setitem__("gamma", float("nan")), "--extra gamma must be a finite number"),
])
def test_a_saved_option_out_of_its_range_names_the_resumed_run(run, tmp_path, capsys, edit, says):
    crafted = crafted_copy(run, tmp_path, edit)
    code, err = resumed_here(capsys, crafted, 8)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"--resume {crafted}: the resumed run's options" in err and says in err, err


@pytest.mark.parametrize("variables, says", [
    ({"RANK": "0", "WORLD_SIZE": "abc"}, "WORLD_SIZE='abc' in the environment"),
    ({"RANK": "abc", "WORLD_SIZE": "1"}, "RANK='abc' in the environment"),
    ({"RANK": "3", "WORLD_SIZE": "2"}, "RANK='3' in the environment"),
    ({"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "x", "MASTER_PORT": "29500"}, "LOCAL_RANK='x' in the environment"),
    ({"RANK": "0", "WORLD_SIZE": "1", "MASTER_PORT": "abc"}, "MASTER_PORT='abc' in the environment"),
    ({"RANK": "0", "WORLD_SIZE": "1", "MASTER_PORT": "99999"}, "MASTER_PORT='99999' in the environment"),
])
def test_launcher_variables_that_are_not_numbers_are_a_usage_error_naming_them(tmp_path, monkeypatch, variables,
                                                                                says):
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_PORT")}
    done = train("--iterations", "4", *ARGS, "--log-dir", tmp_path / "run", env={**env, **variables})
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert says in done.stderr and "invalid literal" not in done.stderr, done.stderr
    assert not (tmp_path / "run").exists()


def test_a_crafted_checkpoint_for_evaluate_is_named_before_it_is_built(run, tmp_path, capsys):
    """Layer widths of 40,000 built 6 GB of actor for 30 s (16,384 here, the widest the trainer takes: 1.1 GB)
    before the sizes were compared; actor settings that are a list ended in an AttributeError
    (exit 1); NaN weights were found in the rollout as `actions contain NaN or inf`, naming no file."""
    from sacscale.cli import main

    ckpt = torch.load(run / "checkpoints" / "final.pt", weights_only=True)
    cases = {
        "wide": (lambda c: c["actor_kwargs"].__setitem__("hidden", [16384, 16384]),
                 "actor does not load: its settings make 271,"),
        "list": (_set("actor_kwargs", [98, 29]), "not a checkpoint the trainer wrote (its 'actor_kwargs' is list"),
        "nan": (lambda c: c["actor_flat"].fill_(float("nan")),
                "not a checkpoint the trainer wrote (actor_flat holds NaN or inf)"),
    }
    for name, (edit, says) in cases.items():
        crafted = copy.deepcopy(ckpt)
        edit(crafted)
        path = tmp_path / f"{name}.pt"
        torch.save(crafted, path)
        out = tmp_path / f"{name}.json"
        # in this process, as the resumes above: the refusal comes before anything is built
        code = main(["evaluate", str(path), "--output", str(out), "--envs-per-command", "1", "--seconds", "2",
                     "--threads", "1"])
        err = capsys.readouterr().err
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        assert f"{path}: " in err and says in err, err
        assert not out.exists()


@pytest.mark.parametrize("field, value, says", [
    ("curriculum", [0.1] * 5, "its curriculum holds 5 values, not 2 (penalty scale, mean episode length)"),
    ("curriculum", [float("nan"), 333.3], "its curriculum holds a value that is not finite"),
    ("env_steps", -10**12, "its env_steps -1000000000000 is not a finite count of steps"),
])
def test_a_rank_state_of_another_shape_is_named_not_trained_on(run, tmp_path, capsys, field, value, says):
    # a collector's traceback (five values), or a run trained on from a NaN curriculum or a negative count
    crafted = crafted_copy(run, tmp_path, lambda c: None)
    state = crafted / "checkpoints" / "rank0.pt"
    part = torch.load(state, weights_only=True)
    part[field] = value
    torch.save(part, state)
    code, err = resumed_here(capsys, crafted, 8)
    assert code == 2 and "Traceback" not in err and says in err, err


def test_a_checkpoint_file_given_for_its_run_folder_is_named_as_a_file(run, capsys):
    """`--resume RUN/checkpoints/final.pt` said only `.../final.pt/checkpoints/final.pt: no
    checkpoint there`: the folder is what --resume takes."""
    from sacscale.cli import main

    given = run / "checkpoints" / "final.pt"
    capsys.readouterr()
    code = main(["train", "--resume", str(given), "--iterations", "9"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.strip() == (f"sacscale train: error: --resume {given}: a file, not a run folder (give the folder the "
                           "run wrote, its --log-dir, which holds checkpoints/)"), err


def test_adamw_steps_beyond_the_learners_updates_are_named(run, tmp_path, capsys):
    """The run made one update (one critic, alpha and actor step each); steps of 3 beside it, or
    beside learner.iterations 0, are no state the trainer writes."""
    crafted = crafted_copy(run, tmp_path, lambda c: c["optimizers"]["critic"][0]["step"].fill_(3.0))
    code, err = resumed_here(capsys, crafted, 8)
    assert code == 2 and err.strip().splitlines() == [
        f"sacscale train: error: --resume: {crafted}/checkpoints/rank0.pt: not a checkpoint the trainer wrote "
        "(final.pt's optimizers.critic has made 3 step(s), its learner.iterations 1 make 1 (1 an update))"], err


def test_a_run_resumed_under_another_launchers_world_size_is_named_as_such(run, monkeypatch):
    """A genuine one-rank run resumed under torchrun's WORLD_SIZE 2 was called a checkpoint the
    trainer never wrote: the launch, not the file, differs."""
    from sacscale.train.config import TrainConfig, TrainingError
    from sacscale.train.resume import resume_config

    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("MASTER_PORT", "29500")
    with pytest.raises(TrainingError) as refused:
        resume_config(TrainConfig(resume=str(run), iterations=8))
    assert str(refused.value) == (f"--resume: {run / 'checkpoints' / 'final.pt'}: saved by 1 rank(s), resumed under "
                                  "the launcher's WORLD_SIZE 2: a run resumes with the ranks it trained with")
