"""A learner's full learning state as CPU copies (for checkpoints and resume), and back."""

from __future__ import annotations

import torch


class RandomStateRefused(ValueError):
    """The saved random state, which the learner's generator would not take."""


def cpu_tree(obj):
    """A copy of a (nested dict/list) state with every tensor on the CPU."""
    if torch.is_tensor(obj):
        return obj.detach().to("cpu", copy=True)
    if isinstance(obj, dict):
        return {k: cpu_tree(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(cpu_tree(v) for v in obj)
    return obj


def save(learner, with_replay: bool = False) -> dict:
    """Everything a resumed learner needs to continue this one (CPU copies): state
    tensors, AdamW state, the random stream, the iteration count, the normaliser's
    pending rows, and (optionally; about 1.8 GB at 2048 envs) the replay buffer."""
    cpu = lambda t: t.detach().to("cpu", copy=True)  # noqa: E731
    if learner.device.type == "cuda":
        torch.cuda.synchronize(learner.device)
        rng = torch.cuda.get_rng_state(learner.device)
    else:
        rng = learner._generator.get_state()
    out = {
        "tensors": {name: cpu(t) for name, t in learner.state_tensors().items()},
        "optimizers": {name: cpu_tree(opt.state_dict()["state"]) for name, opt in learner.optimizers.items()},
        "rng": rng,
        "iterations": learner.iterations,
        "replay": None,
    }
    if learner.obs_norm:
        out["fresh"] = {name: cpu(t) for name, t in learner._fresh.items()}
        out["fresh_pending"] = cpu(learner._fresh_pending)
    if with_replay:
        out["replay"] = learner.replay.state()
    return out

def _set_random_state(learner, rng) -> None:
    """The generator's state from `rng`; what torch refuses is named as the state's field."""
    try:
        if learner.device.type == "cuda":
            torch.cuda.set_rng_state(rng, learner.device)
        else:
            learner._generator.set_state(rng)
    except RuntimeError as exc:
        raise RandomStateRefused(f"learner.rng: {str(exc).splitlines()[0][:200]}") from None


@torch.no_grad()
def load(learner, state: dict) -> None:
    """Continue from `learning_state()` (before the first update: the graph is
    captured from this state)."""
    if learner._graph is not None:
        raise RuntimeError("load_learning_state() must come before the first update()")
    mine = learner.state_tensors()
    if set(state["tensors"]) != set(mine):
        raise ValueError(f"learning state holds {sorted(state['tensors'])}, this learner has {sorted(mine)} "
                         "(a different obs_norm setting?)")
    for name, t in mine.items():
        if state["tensors"][name].shape != t.shape:
            raise ValueError(f"learning state {name}: shape {tuple(state['tensors'][name].shape)}, "
                             f"expected {tuple(t.shape)} (different network sizes?)")
        t.copy_(state["tensors"][name])
    for name, opt in learner.optimizers.items():
        if state["optimizers"][name]:
            # our param groups (a device-tensor lr on CUDA) with the saved moments; torch
            # moves them to the parameter's device (the step count too where fused)
            opt.load_state_dict({**opt.state_dict(), "state": state["optimizers"][name]})
    _set_random_state(learner, state["rng"])
    learner.iterations = int(state["iterations"])
    if learner.obs_norm:
        for name, t in learner._fresh.items():
            t.copy_(state["fresh"][name])
        learner._fresh_pending.copy_(state["fresh_pending"])
    if state.get("replay") is not None:
        learner.replay.load_state(state["replay"])
