"""Bounds on the learner's networks as a whole: each hidden size is bounded alone in
sacscale.checks, but 16 layers of the widest size made one critic of 4.3e9 weights, and one
16,384-wide layer at a batch of 262,144 rows a 16 GiB activation, each failing in torch's
allocator (or driving the machine into the OOM killer) naming no setting. The counts are
computed from the settings, without torch, so planning can check them."""

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


# Values one update's forward pass may hold for its backward (`activation_values`). The
# learner keeps about three float32 tensors of each layer's width per batch row (the Linear's
# output, the LayerNorm's, the SiLU's), 24 GiB at this bound, beside at most 10 GiB of both
# networks' state (MAX_NETWORK_PARAMS): within an 80 GB GPU with room for the backward's
# gradients. 62x the reference's learner at its batch of 8192 (3.4e7 values).
MAX_ACTIVATION_VALUES = 1 << 31

# SACConfig's own network sizes (sacscale.learn.config imports torch; the planner checks a batch
# against the reference networks without it; a test keeps the two equal)
REFERENCE_NETWORKS = {"actor_obs_dim": 98, "critic_obs_dim": 101, "action_dim": 29, "actor_hidden": (512, 256, 128),
                      "critic_hidden": (768, 384, 192), "num_atoms": 101}


def activation_values(settings: dict) -> int:
    """Values the actor update's forward pass keeps for its backward, the larger of the two
    updates (the critic update runs only the critics with gradients): per batch row, each
    layer's input and output through the actor (observation, hidden widths, mean and log-std
    heads) and through both Q networks of the twin critic, which the actor's loss runs on its
    action ((observation, action), hidden widths, the C51 atoms)."""
    s = settings
    actor = s["actor_obs_dim"] + sum(s["actor_hidden"]) + 2 * s["action_dim"]
    critic = 2 * (s["critic_obs_dim"] + s["action_dim"] + sum(s["critic_hidden"]) + s["num_atoms"])
    return s["batch_size"] * (actor + critic)


def learner_size_problem(settings: dict, named) -> str | None:
    """Why the learner `settings` describe is larger than one may be: its networks
    (`network_size_problem`), then the activations of a batch through them; None where it fits."""
    if problem := network_size_problem(settings, named):
        return problem
    count = activation_values(settings)
    if count <= MAX_ACTIVATION_VALUES:
        return None
    s = settings
    return (f"{named('batch_size')} {s['batch_size']} with {named('actor_hidden')} {list(s['actor_hidden'])}, "
            f"{named('critic_hidden')} {list(s['critic_hidden'])} and {named('num_atoms')} {s['num_atoms']}: "
            f"an update's activations would hold {count:,} values (batch rows x every layer's width through the "
            f"actor and both critics), more than the {MAX_ACTIVATION_VALUES:,} a learner may hold (kept in float32 "
            "for the backward pass, they must fit a GPU beside the networks); give a smaller batch or narrower layers")


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
