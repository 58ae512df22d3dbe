"""FastSAC hyperparameters: one dataclass, one name per knob.

Defaults are the reference values of the FastSAC specification this project follows (the
seed's; docs/deviations.md lists where we differ). Sizes that depend on the number of
environments (replay capacity, learning start) are methods, so the same config serves
every rank and every preset.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sacscale.learn.learning_start import learning_starts_rows

if TYPE_CHECKING:
    import torch

# names only: torch loads where a dtype is used, so a train refused on its options answers without it
_DTYPES = ("float32", "bfloat16", "float16")
# The C51 support's narrowest width: the task's rewards are of order 1 a step. At v_max - v_min
# of 1e-300 the atoms' spacing is 0 in float32 and the projection divides 0 by 0.
MIN_RETURN_SPAN = 1.0


def _as_float(value):
    """An int (not a bool) as the float it is; anything else as given, for the checks to name."""
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


@dataclass
class SACConfig:
    # --- dimensions of the G1WalkFlat task ---
    actor_obs_dim: int = 98
    critic_obs_dim: int = 101
    action_dim: int = 29

    # --- networks ---
    actor_hidden: tuple[int, ...] = (512, 256, 128)
    critic_hidden: tuple[int, ...] = (768, 384, 192)
    log_std_min: float = -5.0
    log_std_max: float = 0.0
    mean_clip: float = 10.0

    # --- distributional critic (C51) ---
    num_atoms: int = 101
    v_min: float = -20.0
    v_max: float = 20.0

    # --- SAC ---
    gamma: float = 0.97
    tau: float = 0.125                 # Polyak rate, applied after every critic update
    alpha_init: float = 0.001
    target_entropy: float = 0.0

    # --- optimisation (AdamW for critic, actor and alpha) ---
    lr: float = 3e-4
    betas: tuple[float, float] = (0.9, 0.95)
    weight_decay: float = 1e-3         # critic and actor
    alpha_weight_decay: float = 0.0

    # --- schedule of one iteration ---
    critic_updates: int = 8            # critic + alpha updates per iteration
    actor_update_at: tuple[int, ...] = (0, 4)   # actor update after these critic updates
    batch_size: int = 8192             # per rank

    # --- observation normalisation (off: the reference's SAC does not normalise) ---
    # Running mean and variance of the actor's and the critic's observations over every
    # row added to the replay (all ranks' rows in data parallel); inputs become
    # (x - mean) / (std + obs_norm_eps).
    obs_norm: bool = False
    obs_norm_eps: float = 1e-2

    # --- replay ---
    replay_per_env: int = 512          # capacity = replay_per_env * num_envs rows
    learning_starts: int | None = None  # None: max(batch_size, 10 * num_envs) rows

    # --- execution ---
    # Autocast dtype: "auto" is bfloat16 on CUDA and float32 (no autocast) on CPU;
    # "float32" disables autocast everywhere; "bfloat16"/"float16" force it.
    amp_dtype: str = "auto"
    compile_mode: str = "default"      # torch.compile mode; its own CUDA graphs must stay off
    compile_on_cpu: bool = False       # CPU: compile only when asked (tests, debugging)
    graph_warmup_iters: int = 3        # eager iterations on the capture stream before capture
    capture_error_mode: str = "global"  # torch.cuda.graph(capture_error_mode=...)

    def __post_init__(self) -> None:
        self.actor_hidden = tuple(self.actor_hidden)
        self.critic_hidden = tuple(self.critic_hidden)
        self.betas = tuple(self.betas)
        self.actor_update_at = tuple(sorted(set(self.actor_update_at)))
        if self.critic_updates < 1:
            raise ValueError("critic_updates must be >= 1")
        if any(k < 0 or k >= self.critic_updates for k in self.actor_update_at):
            raise ValueError(
                f"actor_update_at {self.actor_update_at} must index critic updates "
                f"0..{self.critic_updates - 1}"
            )
        if not self.log_std_min < self.log_std_max:
            raise ValueError(f"need log_std_min < log_std_max, got {self.log_std_min} and {self.log_std_max}")
        if not self.v_min < self.v_max or self.num_atoms < 2:
            raise ValueError("need v_min < v_max and num_atoms >= 2")
        if self.v_max - self.v_min < MIN_RETURN_SPAN:
            raise ValueError(f"need v_max - v_min >= {MIN_RETURN_SPAN:g} (the return support must hold a step's "
                             f"reward, of order 1), got {self.v_min} and {self.v_max}")
        for name in ("weight_decay", "alpha_weight_decay"):
            # AdamW scales each weight by 1 - lr x weight_decay a step: at 1 or more it zeroes or flips them
            if not self.lr * getattr(self, name) < 1:
                raise ValueError(f"need lr x {name} < 1 (AdamW scales each weight by 1 - lr x {name} a step), "
                                 f"got {self.lr} x {getattr(self, name)}")
        if self.amp_dtype != "auto" and self.amp_dtype not in _DTYPES:
            raise ValueError(f"amp_dtype must be 'auto' or one of {sorted(_DTYPES)}")
        if self.compile_mode in ("reduce-overhead", "max-autotune"):
            raise ValueError(
                f"compile_mode {self.compile_mode!r} turns on Inductor's own CUDA graphs, "
                "which conflict with the learner's whole-iteration capture; use 'default' "
                "or 'max-autotune-no-cudagraphs'"
            )
        self._floats_as_floats()  # last: the messages above show the values as given

    def _floats_as_floats(self) -> None:
        """A whole number given for a float setting (JSON's `0`) is that float: torch's AdamW
        refused betas of an int and a float (`betas must be either both floats or both Tensors`)."""
        for f in dataclasses.fields(self):
            if f.type == "float":
                setattr(self, f.name, _as_float(getattr(self, f.name)))
        self.betas = tuple(_as_float(b) for b in self.betas)

    # --- derived sizes ---
    @property
    def actor_updates(self) -> int:
        return len(self.actor_update_at)

    @property
    def critic_input_dim(self) -> int:
        return self.critic_obs_dim + self.action_dim

    def replay_capacity(self, num_envs: int) -> int:
        return self.replay_per_env * num_envs

    def learning_starts_rows(self, num_envs: int) -> int:
        return learning_starts_rows(self.learning_starts, self.batch_size, num_envs)

    def autocast_dtype(self, device: torch.device | str) -> torch.dtype | None:
        """The autocast dtype on `device`, or None when autocast is off."""
        import torch

        device = torch.device(device)
        if self.amp_dtype == "auto":
            return torch.bfloat16 if device.type == "cuda" else None
        return None if self.amp_dtype == "float32" else getattr(torch, self.amp_dtype)

    def replace(self, **changes) -> "SACConfig":
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


__all__ = ["SACConfig"]
