"""Velocity-tracking evaluation of a trained actor on G1WalkFlat.

Protocol: every command of a fixed grid is given to `envs_per_command` envs for one full
episode (no observation noise, nominal PD gains, deterministic actions tanh(mean)). After
a settling time, each control step of each env that has not fallen is a sample: the
achieved planar velocity of the pelvis in the heading frame and the yaw rate against the
command. The yaw rate is the torso IMU gyro's z, the quantity the task tracks and rewards
(the pelvis's world yaw rate is reported beside it: it swings with the gait). The gyro
reading is from the start of the last substep (as the task reads it), the velocities from
the state reached, 6.7 ms later.
The same error function scores a robot that stands still (achieved 0, no falls), so every
error has a reference point: a ratio below 1 means the policy tracks better than standing.
"""

from __future__ import annotations

import hashlib
import io
import math
import time
from pathlib import Path

import numpy as np
import torch

from sacscale import stopping
from sacscale.atomic import atomic_write_bytes
from sacscale.checks import checkpoint_problem
from sacscale.eval import limits
from sacscale.eval import protocol
from sacscale.eval.actor_settings import actor_settings_problem, task_settings_problem
from sacscale.eval.evaluate_checks import CheckpointError, batch_problem, read_input, resolve_checkpoint
from sacscale.eval.pooling import actions_label, ratios
from sacscale.eval.protocol import COMMAND_GRID
from sacscale.learn.networks import Actor
from sacscale.saved_tensors import load_weights, tensor_problem
from sacscale.shapes import record_problem
from sacscale.task import g1_model as g1
from sacscale.task.g1_walk_flat import G1WalkFlat
from sacscale.task.walk_rules import TILT_OBS, TaskConfig, tracking_kernel

CHECKPOINT_FORMAT = "sacscale-checkpoint"
CHECKPOINT_VERSIONS = (1, 2)  # 2 adds the learning state; the policy entries are the same
# what evaluate and render read of a checkpoint to build its policy
POLICY_SHAPE = {"actor_kwargs": {"obs_dim": int, "action_dim": int}, "actor_flat": torch.Tensor, "task": dict}


# ---------------------------------------------------------------------------- checkpoint


def load_checkpoint(path: Path) -> dict:
    """Load and validate a `sacscale train` checkpoint (dims must fit the task)."""
    return read_checkpoint(path)[0]


def read_checkpoint(path: Path) -> tuple[dict, str]:
    """The validated checkpoint at `path` and the SHA-256 of the bytes it was loaded from;
    read as read_input reads (never through another user's symbolic link)."""
    data = read_input(path)
    problem = checkpoint_problem(io.BytesIO(data))
    if problem:
        raise CheckpointError(f"{path}: {problem}")
    try:
        ckpt = load_weights(io.BytesIO(data))
    except Exception as exc:  # pickle, zip and weights_only errors all mean "not ours"
        raise CheckpointError(f"{path}: not a readable torch checkpoint ({type(exc).__name__}: {exc})") from None
    return _checked_checkpoint(ckpt, path), hashlib.sha256(data).hexdigest()


def _checked_checkpoint(ckpt, path: Path) -> dict:
    if not isinstance(ckpt, dict) or ckpt.get("format") != CHECKPOINT_FORMAT:
        found = ckpt.get("format") if isinstance(ckpt, dict) else type(ckpt).__name__
        raise CheckpointError(f"{path}: format is {found!r}, expected {CHECKPOINT_FORMAT!r}")
    if ckpt.get("version") not in CHECKPOINT_VERSIONS:
        raise CheckpointError(f"{path}: checkpoint version {ckpt.get('version')!r}, "
                              f"this evaluator reads {' and '.join(map(str, CHECKPOINT_VERSIONS))}")
    for key in ("actor_kwargs", "actor_flat", "task"):
        if key not in ckpt:
            raise CheckpointError(f"{path}: no {key!r} entry")
    problem = record_problem(ckpt, POLICY_SHAPE)
    if problem:  # a list of actor settings ended in an AttributeError naming no file
        raise CheckpointError(f"{path}: not a checkpoint the trainer wrote ({problem})")
    if problem := actor_settings_problem(ckpt["actor_kwargs"]) or _policy_problem(ckpt):
        raise CheckpointError(f"{path}: not a checkpoint the trainer wrote ({problem})")
    tilt = ckpt["task"].get("tilt_obs")
    if tilt not in TILT_OBS:
        raise CheckpointError(f"{path}: task tilt_obs is {tilt!r}, expected one of {TILT_OBS}")
    return ckpt


def _policy_problem(ckpt: dict) -> str | None:
    """The trainer writes its task settings and one float32 vector of weights (a sparse, meta
    or quantized one ended in torch's error naming no file; an int or bool one was evaluated)."""
    return task_settings_problem(ckpt["task"]) or tensor_problem(ckpt["actor_flat"], "actor_flat", torch.float32,
                                                                  shape=(None,))


def build_actor(ckpt: dict, path: Path) -> Actor:
    flat = ckpt["actor_flat"]
    try:  # sized on the meta device first: crafted layer widths took 30 s and GBs before the sizes were compared
        with torch.device("meta"):
            numel = Actor(**ckpt["actor_kwargs"]).flat_numel()
    except (TypeError, ValueError, AttributeError, RuntimeError) as exc:
        raise CheckpointError(f"{path}: actor does not load: {exc}") from None
    if numel != flat.numel():
        raise CheckpointError(f"{path}: actor does not load: its settings make {numel:,} weights, its flat "
                              f"vector holds {flat.numel():,}")
    try:
        actor = Actor(**ckpt["actor_kwargs"])
        actor.load_flat(flat)
    except (TypeError, ValueError, AttributeError, RuntimeError) as exc:
        raise CheckpointError(f"{path}: actor does not load: {exc}") from None
    return actor.eval()


def load_input_model(path: str | Path | None):
    """(the task model, the SHA-256 of its .mjb bytes): `--model`'s file read once, as
    read_input reads it (our own links followed, another user's refused), and loaded
    from those bytes, so the hash is the model's that ran; None builds the model."""
    if path is None:
        model = g1.load_model(None)
        return model, g1.model_bytes_sha256(model)
    data = read_input(path, "model")
    name = g1.mujoco_path(path)
    if not name.endswith(".mjb"):  # MJCF names further files of its own: MuJoCo reads it from disk
        return g1.load_model(path), hashlib.sha256(data).hexdigest()
    return g1.load_model(name, data), hashlib.sha256(data).hexdigest()


# ---------------------------------------------------------------------------- measurement


def heading_frame_velocity(qpos: np.ndarray, qvel: np.ndarray) -> np.ndarray:
    """(N, 3): pelvis (vx, vy) in the heading frame and world yaw rate, from the free joint.

    The free joint's linear velocity qvel[0:3] is in world coordinates: rotate it by minus
    the yaw. Its angular velocity qvel[3:6] is in body coordinates: the world z component
    is the last row of the body's rotation matrix times it.
    """
    w, x, y, z = (qpos[:, 3 + i] for i in range(4))
    yaw = np.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    c, s = np.cos(yaw), np.sin(yaw)
    vx, vy = qvel[:, 0], qvel[:, 1]
    r20, r21, r22 = 2.0 * (x * z - w * y), 2.0 * (y * z + w * x), 1.0 - 2.0 * (x * x + y * y)
    wz = r20 * qvel[:, 3] + r21 * qvel[:, 4] + r22 * qvel[:, 5]
    return np.stack([c * vx + s * vy, -s * vx + c * vy, wz], axis=1)


def rollout(env: G1WalkFlat, actor, obs: np.ndarray, steps: int, settle_steps: int,
            noise: torch.Generator | None = None, noise_scale: float = 1.0) -> dict:
    """Run `steps` control steps; per step and env the achieved velocity and whether it counts.

    A sample counts when the env has not fallen so far in its episode, does not fall at
    this step, and the step is past the settling time. With `noise` (a generator) the
    actions are sampled as in training, tanh(mean + noise_scale * std * N(0, 1)), instead of
    tanh(mean). The velocity is read between the physics and the task work of a step, so it
    is the state reached, before an auto-reset. action_std: the policy's std (before tanh),
    mean over the counted samples and action dimensions.
    """
    n = env.num_envs
    achieved = np.zeros((steps, n, 4))  # vx, vy (pelvis, heading frame), pelvis wz, torso wz
    measured = np.zeros((steps, n), dtype=bool)
    alive = np.ones(n, dtype=bool)
    fell = np.zeros(n, dtype=bool)
    sim_errors = 0
    std_sum, std_count = 0.0, 0
    for k in range(steps):
        stopping.check()  # a stop raised where it was lost (sacscale.stopping) ends the evaluation here
        obs_t = torch.from_numpy(obs)
        with torch.no_grad():
            mean, log_std = actor.mean_and_log_std(obs_t)
        if noise is None:
            actions = torch.tanh(mean).numpy()  # = actor.act(obs_t, deterministic=True)
        else:
            eps = torch.randn(n, actor.action_dim, generator=noise, dtype=obs_t.dtype)
            # Actor.forward's sample from the mean and std already computed (one network pass a step)
            actions = torch.tanh(mean.float() + log_std.float().exp() * (noise_scale * eps).float()).numpy()
        env.start_step(actions)
        env.wait_physics()
        achieved[k, :, :3] = heading_frame_velocity(env.qpos, env.qvel)
        # the yaw rate the task tracks and rewards: the torso IMU gyro's z (its rate is
        # steadier than the pelvis's, which swings against the torso with the waist yaw)
        achieved[k, :, 3] = env.torso_yaw_rate()
        out = env.finish_step()
        # k + 1 steps done: the state is at t = (k + 1) * dt
        measured[k] = alive & ~out.terminated & (k + 1 >= settle_steps)
        counted = torch.from_numpy(measured[k])
        std_sum += float(log_std[counted].exp().sum())
        std_count += int(counted.sum()) * actor.action_dim
        fell |= alive & out.terminated
        alive &= ~(out.terminated | out.truncated)  # what an env does after a reset is not scored
        sim_errors += int(out.info["sim_errors"])
        obs = out.actor_obs
    return {"achieved": achieved, "measured": measured, "fell": fell, "sim_errors": sim_errors,
            "action_std": std_sum / std_count if std_count else math.nan}


def _rms(sq_err: np.ndarray, mask: np.ndarray) -> float:
    count = mask.sum()
    return math.sqrt(float(sq_err[mask].sum()) / count) if count else math.nan  # nan -> null in JSON


def _kernel_mean(sq_err: np.ndarray, mask: np.ndarray) -> float:
    """Mean of the task's tracking kernel exp(-err^2 / sigma): 1 is perfect tracking."""
    count = mask.sum()
    return float(tracking_kernel(sq_err[mask], TaskConfig()).mean()) if count else math.nan


def _scores(cmd: np.ndarray, achieved: np.ndarray, mask: np.ndarray, fell: np.ndarray) -> dict:
    """cmd (E, 3), achieved (T, E, 4): vx, vy, pelvis wz, torso wz; mask (T, E), fell (E,)
    of one group of envs. mean/std_achieved: vx, vy and the torso's wz (the tracked one).
    normalised_tracking: the task's tracking kernels averaged over the counted samples,
    the quantity `Reward/tracking_*` logs in training divided by its maximum (planar
    velocity here in the heading frame, the reward's in the pelvis frame: equal while the
    pelvis is level)."""
    err = cmd[None][..., [0, 1, 2, 2]] - achieved
    samples = achieved[mask][:, [0, 1, 3]]  # (M, 3)
    return {
        "normalised_tracking": {
            "lin_vel_xy": _kernel_mean(err[..., 0] ** 2 + err[..., 1] ** 2, mask),
            "yaw_rate": _kernel_mean(err[..., 3] ** 2, mask),
        },
        "rms_error": {
            "lin_vel_xy": _rms(err[..., 0] ** 2 + err[..., 1] ** 2, mask),
            "yaw_rate": _rms(err[..., 3] ** 2, mask),  # torso IMU, as the task's reward
            "yaw_rate_pelvis": _rms(err[..., 2] ** 2, mask),
        },
        "fall_rate": float(fell.mean()),
        "episodes": int(fell.size),
        "samples": int(mask.sum()),
        "mean_achieved": samples.mean(axis=0).tolist() if len(samples) else [math.nan] * 3,
        "std_achieved": samples.std(axis=0).tolist() if len(samples) else [math.nan] * 3,
    }


def tracking_errors(names: list[str], group: np.ndarray, commands: np.ndarray, achieved: np.ndarray,
                    measured: np.ndarray, fell: np.ndarray) -> dict:
    """{"overall", "per_command"} scores; env e ran command names[group[e]] = commands[e].

    Overall errors pool every counted sample of every env (so envs that fell early weigh less).
    """
    per_command = {}
    for i, name in enumerate(names):
        envs = group == i
        scores = _scores(commands[envs], achieved[:, envs], measured[:, envs], fell[envs])
        per_command[name] = {"command": commands[envs][0].tolist(), **scores}
    overall = _scores(commands, achieved, measured, fell)
    del overall["mean_achieved"], overall["std_achieved"]  # a mean over different commands means nothing
    return {"overall": overall, "per_command": per_command}


# ---------------------------------------------------------------------------- evaluation


def evaluate(checkpoint: str | Path, model_path: str | Path | None = None, *, envs_per_command: int = 8,
             seconds: float = 20.0, settle_s: float = limits.SETTLE_S, threads: int = 1, seed: int = protocol.SEED,
             noise_scale: float = protocol.NOISE_SCALE) -> dict:
    """Evaluate a checkpoint (file or run directory); returns the result as a JSON-ready dict.

    noise_scale 0 (the protocol): deterministic actions, tanh(mean); a diagnostic otherwise:
    actions sampled with the policy's std times noise_scale (1: as in training)."""
    t0 = time.perf_counter()
    problem = batch_problem(envs_per_command, threads)
    if problem:
        raise ValueError(problem)
    path = resolve_checkpoint(checkpoint)
    ckpt, checkpoint_sha256 = read_checkpoint(path)
    actor = build_actor(ckpt, path)

    cfg = TaskConfig(**protocol.TASK_SETTINGS, tilt_obs=ckpt["task"]["tilt_obs"])
    steps = limits.control_steps(seconds)
    settle_steps = limits.settle_steps(settle_s)
    problem = limits.seconds_problem(seconds, settle_s, cfg.episode_length)
    if problem:
        raise ValueError(problem)
    if envs_per_command < 1:
        raise ValueError(f"--envs-per-command must be >= 1, got {envs_per_command}")
    if not (math.isfinite(noise_scale) and noise_scale >= 0):
        raise ValueError(f"--noise-scale must be a finite number >= 0, got {noise_scale}")

    names = list(COMMAND_GRID)
    grid = np.array([COMMAND_GRID[k] for k in names])
    _check_grid(grid, cfg)
    group = np.repeat(np.arange(len(names)), envs_per_command)
    commands = grid[group]

    model, model_sha256 = load_input_model(model_path)
    torch_threads = torch.get_num_threads()
    torch.set_num_threads(protocol.TORCH_THREADS)
    env = G1WalkFlat(model, len(commands), threads, seed, config=cfg)
    try:
        env.command_override = commands  # resets now assign the grid instead of sampling
        obs, _ = env.reset()
        # every episode starts at step 0, so none times out inside the window; the
        # observation does not contain the counter, so reset()'s observation stands
        env.timeout_counter[:] = 0
        if not np.array_equal(env.commands, commands):  # explicit: `python -O` drops asserts
            raise RuntimeError("the environment's reset did not assign the command grid")
        noise = torch.Generator().manual_seed(seed + 1) if noise_scale > 0 else None
        roll = rollout(env, actor, obs, steps, settle_steps, noise=noise, noise_scale=noise_scale)
    finally:
        env.close()
        torch.set_num_threads(torch_threads)

    policy = tracking_errors(names, group, commands, roll["achieved"], roll["measured"], roll["fell"])
    # the stand-still robot, through the same function: zero velocity, never falls, every
    # step after settling counts
    still_mask = np.broadcast_to((np.arange(steps) + 1 >= settle_steps)[:, None], roll["measured"].shape)
    baseline = tracking_errors(names, group, commands, np.zeros_like(roll["achieved"]), still_mask,
                               np.zeros_like(roll["fell"]))
    for name, scores in policy["per_command"].items():
        scores["ratio_to_stand_still"] = ratios(scores, baseline["per_command"][name])

    return {
        "checkpoint": str(path),
        "checkpoint_sha256": checkpoint_sha256,
        "iteration": ckpt.get("iteration"),
        "env_steps": ckpt.get("env_steps"),
        "protocol": {
            "commands": protocol.grid_as_recorded(),
            "envs_per_command": envs_per_command,
            "num_envs": len(commands),
            "seconds": seconds,
            "control_dt": g1.CONTROL_DT,
            "steps": steps,
            "settle_s": settle_s,
            "settle_steps": settle_steps,  # samples are steps k (1-based) with k >= settle_steps
            "seed": seed,
            "sim_threads": threads,
            "torch_threads": protocol.TORCH_THREADS,
            "actions": actions_label(noise_scale),
            "noise_scale": noise_scale,
            "tilt_obs": cfg.tilt_obs,
            "noise_joint_pos": cfg.noise_joint_pos,
            "noise_joint_vel": cfg.noise_joint_vel,
            "kp_range": list(cfg.kp_range),
            "kd_range": list(cfg.kd_range),
            "velocity": protocol.VELOCITY,
            "falls": protocol.FALLS,
            "model": None if model_path is None else str(model_path),
            # the file's hash, as `sacscale train` records it (equal to the model's bytes hash
            # for files written by prepare-model); built in memory: the bytes hash
            "model_sha256": model_sha256,
            "checkpoint_model_sha256": ckpt.get("model_sha256"),
        },
        "overall": policy["overall"],
        # the policy's own std before tanh (whatever noise_scale): how much training explores
        "action_std_mean": roll["action_std"],
        "per_command": policy["per_command"],
        "baseline_stand_still": baseline,
        "ratio_to_stand_still": ratios(policy["overall"], baseline["overall"]),
        "sim_errors": roll["sim_errors"],
        "timing": {"wall_s": time.perf_counter() - t0},
    }


def _check_grid(grid: np.ndarray, cfg: TaskConfig) -> None:
    """The grid must be commands the task can sample (inside its ranges, outside its dead zone).
    Explicit checks, not asserts: `python -O` drops those."""
    for dim, (lo, hi) in enumerate((cfg.cmd_vx, cfg.cmd_vy, cfg.cmd_wz)):
        if not ((grid[:, dim] >= lo) & (grid[:, dim] <= hi)).all():
            raise ValueError(f"the evaluation's command grid leaves the task's training range of command "
                             f"{dim} ({lo}..{hi})")
    norm = np.hypot(grid[:, 0], grid[:, 1])
    if not ((norm == 0) | (norm > cfg.cmd_dead_zone)).all():
        raise ValueError(f"the evaluation's command grid has a point inside the task's dead zone "
                         f"({cfg.cmd_dead_zone})")


# ---------------------------------------------------------------------------- figure


def plot_tracking(result: dict, path: str | Path) -> None:
    """The tracking figure (tracking_png), written to `path`."""
    # as every output: a temporary file of this process's own, never through a link
    atomic_write_bytes(path, tracking_png(result))


def tracking_png(result: dict) -> bytes:
    """Per command: commanded vs achieved (mean, std error bars) for vx, vy and wz, as PNG."""
    # matplotlib only when a figure is asked for; Agg: no display needed
    from sacscale.pyplot import pyplot

    plt = pyplot()

    names = list(result["per_command"])
    x = np.arange(len(names))
    fig, axes = plt.subplots(3, 1, figsize=(max(8.0, 0.8 * len(names)), 9.0), sharex=True)
    labels = ("vx (m/s, pelvis, heading frame)", "vy (m/s, pelvis, heading frame)", "wz (rad/s, torso IMU yaw rate)")
    for dim, (ax, label) in enumerate(zip(axes, labels)):
        cmd = [result["per_command"][k]["command"][dim] for k in names]
        mean = [_nan(result["per_command"][k]["mean_achieved"][dim]) for k in names]
        std = [_nan(result["per_command"][k]["std_achieved"][dim]) for k in names]
        ax.scatter(x, cmd, marker="_", s=400, color="black", linewidths=2, label="commanded", zorder=3)
        ax.errorbar(x, mean, yerr=std, fmt="o", color="tab:blue", capsize=4, label="achieved (mean ± std)")
        ax.axhline(0.0, color="grey", lw=0.5)
        ax.set_ylabel(label)
        ax.grid(axis="y", alpha=0.3)
    axes[0].legend(loc="upper right", fontsize=8)
    ticks = [f"{k}\nfalls {result['per_command'][k]['fall_rate']:.2f}" for k in names]
    axes[-1].set_xticks(x, ticks, rotation=30, ha="right")
    o, r = result["overall"], result["ratio_to_stand_still"]
    fig.suptitle(
        f"{Path(result['checkpoint']).name} (iteration {result['iteration']}, {result['env_steps']} env steps): "
        f"rms lin {_fmt(o['rms_error']['lin_vel_xy'])} m/s ({_fmt(r['lin_vel_xy'])}x stand-still), "
        f"yaw {_fmt(o['rms_error']['yaw_rate'])} rad/s ({_fmt(r['yaw_rate'])}x), falls {o['fall_rate']:.2f}/episode",
        fontsize=9,
    )
    fig.tight_layout()
    drawn = io.BytesIO()
    fig.savefig(drawn, format="png", dpi=110, metadata={"Software": None})
    plt.close(fig)
    return drawn.getvalue()


def _nan(v):
    return math.nan if v is None else v


def _fmt(v) -> str:
    return "n/a" if v is None or not math.isfinite(v) else f"{v:.3f}"
