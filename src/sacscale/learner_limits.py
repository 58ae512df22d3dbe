"""Bounds on the learner's networks as a whole: each hidden size is bounded alone in
sacscale.checks, but 16 layers of the widest size made one critic of 4.3e9 weights, which
failed in torch's allocator (or drove the machine into the OOM killer) naming no setting.
The counts are computed from the settings, without torch, so planning can check them."""

from __future__ import annotations

# Parameters one network (the actor, or the twin critic as a whole) may hold. The learner
# keeps five float32 copies of the critic (weights, targets, gradients, AdamW's two
# moments) and four of the actor: 5 GiB at this bound, so both networks' state stays near a
# seventh of an 80 GB GPU, leaving the rest for the batch's activations (a 16,384-wide
# layer's is 512 MiB at batch 8192, and the backward pass keeps several per layer). 256x
# the reference's twin critic (1.0e6 parameters).
MAX_NETWORK_PARAMS = 1 << 28


def trunk_params(in_dim: int, hidden) -> int:
    """Linear -> LayerNorm per hidden layer (sacscale.learn.networks.mlp_trunk): the
    weights and bias of each Linear and the LayerNorm's scale and shift."""
    total = 0
    for width in hidden:
        total += in_dim * width + width + 2 * width
        in_dim = width
    return total


def actor_params(obs_dim: int, action_dim: int, hidden) -> int:
    """The actor's trunk, then its mean and log-std heads."""
    return trunk_params(obs_dim, hidden) + 2 * (hidden[-1] * action_dim + action_dim)


def critic_params(obs_dim: int, action_dim: int, hidden, num_atoms: int) -> int:
    """Both Q networks of the twin C51 critic: (observation, action) in, num_atoms logits out."""
    one = trunk_params(obs_dim + action_dim, hidden) + hidden[-1] * num_atoms + num_atoms
    return 2 * one


def network_size_problem(settings: dict, named) -> str | None:
    """Why the networks `settings` (every SACConfig size, by field name) describe are larger
    than a learner may hold, naming the settings (`named(field)`: how the caller spells
    where it was given) and the count; None where both fit."""
    s = settings
    actor = actor_params(s["actor_obs_dim"], s["action_dim"], s["actor_hidden"])
    if actor > MAX_NETWORK_PARAMS:
        return _too_large(f"{named('actor_hidden')} {list(s['actor_hidden'])}", "the actor", actor)
    critic = critic_params(s["critic_obs_dim"], s["action_dim"], s["critic_hidden"], s["num_atoms"])
    if critic > MAX_NETWORK_PARAMS:
        given = f"{named('critic_hidden')} {list(s['critic_hidden'])} with {named('num_atoms')} {s['num_atoms']}"
        return _too_large(given, "the twin critic", critic)
    return None


def _too_large(given: str, network: str, count: int) -> str:
    return (f"{given}: {network} would hold {count:,} parameters, more than the {MAX_NETWORK_PARAMS:,} a network "
            f"may hold (its weights, gradients and AdamW's moments in float32 must fit a GPU beside the batch)")
