"""Physics cost study: what the constraint solver's settings cost and what they change.

The G1 task model uses MuJoCo's default solver settings (Newton, iterations 100,
ls_iterations 50, tolerance 1e-8; see docs/deviations.md). This module measures, for a
list of other settings, two things against those defaults:

cost: env steps (3 substeps each) per wall-clock second and per CPU-second of this
  process. Every setting is timed on the SAME states: the default setting's own
  trajectory is recorded, and each setting then steps once from each recorded state
  (state written outside the timed region). So a cost difference comes from the solver,
  not from a loose solver sending the robots to cheaper or dearer states (only the first
  of the 3 substeps starts from the same state; a setting that changes the physics also
  changes its own substeps 2-3). `repeats` rounds, in alternating order. Two
  workloads: "stand" (the first `stand_window` recorded states of the standing rollout,
  cycled; the robots still stand there, about 33 contacts) and "random" (every state of
  the random-action rollout: falls, impacts, lying on the floor). The rates of the free-
  running rollouts are kept too (`free_running`), since in use a setting does reach its
  own states.

trajectories: from identical initial states and identical control sequences, each
  setting's free-running rollout is compared with the default's after the checkpoint
  control steps: RMS joint-angle error, pelvis position error, the fraction of envs whose
  fall status (fallen at least once by then, the task's termination test) differs, and
  the fraction still bit-identical to the default. Scenario "stand" holds the standing
  targets; scenario "random" applies a seeded sequence of uniform random actions in
  [-1, 1] (the task's action scale), so the robots move, fall and make and break
  contacts.

The solver settings are per-simulation option fields of one `mujoco.batch.Batch` per
setting (`Batch.expand('opt.iterations')` etc.); the model itself is never changed.
A setting may also add a tiny offset to the initial joint angles (`init_perturbation`):
with the default solver, this shows how fast ANY difference grows in these contact-rich,
falling trajectories, the yardstick for the solver settings' deviations.

Solver iterations are read from `solver_niter` after each control step; as with every
derived field after `Batch.step`, that is the solve of the last of its 3 substeps.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable, Iterable, Sequence

import numpy as np
from mujoco.batch import Batch, SimulationError

from sacscale.mujoco_lib import mujoco, mujoco_log_silenced
from sacscale.sim.bench import cpu_model
from sacscale.sim.solver_settings import SolverSetting, default_sweep
from sacscale.sim.step_limits import DEFAULT_CHECKPOINTS
from sacscale.task import g1_model as g1
from sacscale.task.walk_rules import TaskConfig

Progress = Callable[[int], None]  # called with the number of control steps just done

SCENARIOS = ("stand", "random")

_UNSTABLE_WARNINGS = np.array(
    [int(mujoco.mjtWarning.mjWARN_BADQPOS), int(mujoco.mjtWarning.mjWARN_BADQVEL),
     int(mujoco.mjtWarning.mjWARN_BADQACC)]
)

# Initial states: the standing keyframe, moved and turned on the floor, with small joint
# offsets and a small base velocity, so that the envs differ but still start standing.
_INIT_XY = 0.5  # m
_INIT_JOINT = 0.02  # rad
_INIT_BASE_VEL = 0.1  # m/s and rad/s


# ---------------------------------------------------------------------- inputs


def initial_states(model: mujoco.MjModel, num_envs: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(qpos, qvel), (N, nq) and (N, nv): the keyframe, spread over the floor, near standing."""
    rng = np.random.default_rng(seed)
    key = model.key(g1.KEYFRAME).id
    qpos = np.tile(model.key_qpos[key], (num_envs, 1))
    qvel = np.zeros((num_envs, model.nv))
    qpos[:, 0:2] += rng.uniform(-_INIT_XY, _INIT_XY, (num_envs, 2))
    yaw = rng.uniform(-np.pi, np.pi, num_envs)
    qpos[:, 3:7] = np.stack([np.cos(yaw / 2), np.zeros(num_envs), np.zeros(num_envs), np.sin(yaw / 2)], axis=1)
    qpos[:, 7:] += rng.uniform(-_INIT_JOINT, _INIT_JOINT, (num_envs, model.nq - 7))
    qvel[:, 0:6] = rng.uniform(-_INIT_BASE_VEL, _INIT_BASE_VEL, (num_envs, 6))
    return qpos, qvel


def control_sequence(model: mujoco.MjModel, scenario: str, num_envs: int, steps: int, seed: int) -> np.ndarray:
    """(steps, N, nu) position targets: standing targets, or targets + uniform [-1, 1] actions."""
    q0 = model.key_ctrl[model.key(g1.KEYFRAME).id]
    if scenario == "stand":
        return np.broadcast_to(q0, (steps, num_envs, model.nu))
    if scenario == "random":
        rng = np.random.default_rng([seed, 1])
        return q0 + rng.uniform(-1.0, 1.0, (steps, num_envs, model.nu))
    raise ValueError(f"unknown scenario {scenario!r}: one of {SCENARIOS}")


def checkpoints_for(steps: int, checkpoints: Iterable[int] = DEFAULT_CHECKPOINTS) -> list[int]:
    """The checkpoints within steps; the last step if none is."""
    out = sorted({int(c) for c in checkpoints if 0 < int(c) <= steps})
    return out or [steps]


# ---------------------------------------------------------------------- the batch


class _SettingBatch:
    """A Batch whose simulations all run with one solver setting."""

    def __init__(self, model: mujoco.MjModel, setting: SolverSetting, num_envs: int, num_threads: int):
        self.model = model
        self.batch = Batch(model, num_envs, num_threads)
        self._slices = _slices(num_envs, setting.envs_per_call(min(num_threads, len(os.sched_getaffinity(0)))))
        for field, value in setting.options().items():
            per_sim = self.batch.expand(f"opt.{field}")
            per_sim[:] = value
        self.qpos = self.batch.bind("qpos")
        self.qvel = self.batch.bind("qvel")
        self.warmstart = self.batch.bind("qacc_warmstart")
        self.ctrl = self.batch.bind("ctrl")
        self.sens = self.batch.bind("sensordata")
        self.niter = self.batch.bind("solver_niter")
        self.nisland = self.batch.bind("nisland")
        self.ncon = self.batch.bind("ncon")
        up = int(model.sensor("torso_upvector").adr[0])
        self._up_z = up + 2
        cfg = TaskConfig()
        self._cos_max_tilt = float(np.cos(np.deg2rad(cfg.max_tilt_deg)))
        self._min_height = cfg.min_pelvis_height
        self._warn0 = self._warnings()

    def _warnings(self) -> np.ndarray:
        return self.batch.warning[:, _UNSTABLE_WARNINGS, 1].copy()

    def set_state(self, qpos: np.ndarray, qvel: np.ndarray, warmstart: np.ndarray | None = None) -> None:
        self.batch.reset(stage=mujoco.mjtStage.mjSTAGE_NONE)
        self.qpos[:] = qpos
        self.qvel[:] = qvel
        if warmstart is not None:
            self.warmstart[:] = warmstart
        self._warn0 = self._warnings()

    def step(self) -> tuple[float, float, np.ndarray]:
        """One control step, slice by slice (a stop is acted on between them); (wall s, CPU s,
        ids of simulations that raised). Each simulation steps alone, so the slices give the
        same states, bit for bit, as one call over all."""
        t0, c0 = time.perf_counter(), time.process_time()
        failed = [np.zeros(0, dtype=np.int64)]
        for ids in self._slices:
            try:
                self.batch.step(ids, nstep=g1.N_SUBSTEPS)
            except SimulationError as e:
                failed.append(np.asarray(e.ids, dtype=np.int64))
        return time.perf_counter() - t0, time.process_time() - c0, np.concatenate(failed)

    def solver_iterations(self) -> np.ndarray:
        """(N,) iterations of the last substep's solve, summed over constraint islands."""
        k = np.maximum(self.nisland, 1)
        cols = np.arange(self.niter.shape[1])
        return np.where(cols[None, :] < k[:, None], self.niter, 0).sum(axis=1)

    def fallen(self) -> np.ndarray:
        """(N,) bool: the task's termination test (tilt beyond 65 degrees or pelvis below 0.3 m)."""
        return (self.sens[:, self._up_z] < self._cos_max_tilt) | (self.qpos[:, 2] < self._min_height)

    def unstable(self) -> np.ndarray:
        """(N,) bool: MuJoCo's instability check fired (it then resets the sim to qpos0)."""
        return (self._warnings() > self._warn0).any(axis=1)


def _slices(num_envs: int, per_call: int) -> list[np.ndarray | None]:
    """The ids of each MuJoCo call of a step; [None] (all, one call) when one call holds them."""
    if per_call >= num_envs:
        return [None]
    return [np.arange(a, min(a + per_call, num_envs), dtype=np.int32) for a in range(0, num_envs, per_call)]


def _rate(num_envs: int, steps: int, wall: float, cpu: float) -> dict:
    return {
        "env_steps_per_s": num_envs * steps / wall if wall > 0 else float("nan"),
        "env_steps_per_cpu_s": num_envs * steps / cpu if cpu > 0 else float("nan"),
        "wall_s": wall,
        "cpu_s": cpu,
    }


def rollout(
    model: mujoco.MjModel,
    setting: SolverSetting,
    qpos0: np.ndarray,
    qvel0: np.ndarray,
    controls: np.ndarray,
    num_threads: int,
    checkpoints: Sequence[int],
    record_states: int = 0,
    progress: Progress | None = None,
) -> dict:
    """Free-running rollout of len(controls) control steps from (qpos0, qvel0).

    Returns its rates, mean solver iterations and contacts, and at each checkpoint k (after
    k control steps) qpos, qvel and whether each env has fallen by then. record_states > 0
    also returns the states before each of the first record_states steps (for replay).
    """
    steps, n = controls.shape[0], qpos0.shape[0]
    sb = _SettingBatch(model, setting, n, num_threads)
    qpos_init = qpos0.copy()
    qpos_init[:, 7:] += setting.init_perturbation
    sb.set_state(qpos_init, qvel0)
    want = set(checkpoints)
    rec = {f: [] for f in ("qpos", "qvel", "qacc_warmstart", "ctrl")} if record_states else None
    fell = np.zeros(n, dtype=bool)
    first_fall = np.full(n, -1, dtype=np.int64)  # control step at which each env first fell
    failed = np.zeros(n, dtype=bool)
    wall = cpu = 0.0
    niter_sum = ncon_sum = 0.0
    at: dict[int, dict] = {}
    for i in range(steps):
        sb.ctrl[:] = controls[i]
        if rec is not None and i < record_states:
            for f, arr in (("qpos", sb.qpos), ("qvel", sb.qvel), ("qacc_warmstart", sb.warmstart), ("ctrl", sb.ctrl)):
                rec[f].append(arr.copy())
        w, c, bad = sb.step()
        wall, cpu = wall + w, cpu + c
        failed[bad] = True
        niter_sum += float(sb.solver_iterations().mean())
        ncon_sum += float(sb.ncon.mean())
        now = sb.fallen()
        first_fall[now & ~fell] = i + 1
        fell |= now
        if i + 1 in want:
            at[i + 1] = {"qpos": sb.qpos.copy(), "qvel": sb.qvel.copy(), "fell": fell.copy()}
        if progress:
            progress(1)
    unstable = sb.unstable() | failed
    out = {
        "rate": _rate(n, steps, wall, cpu),
        "mean_solver_iterations": niter_sum / steps,
        "mean_contacts": ncon_sum / steps,
        "unstable_envs": int(unstable.sum()),
        "unstable": unstable,
        "checkpoints": at,
        "first_fall": first_fall,
    }
    if rec is not None:
        out["states"] = {f: np.stack(v) for f, v in rec.items()}
    return out


def replay_cost(
    model: mujoco.MjModel,
    setting: SolverSetting,
    states: dict,
    steps: int,
    num_threads: int,
    progress: Progress | None = None,
) -> dict:
    """Rates of `steps` control steps, each from a recorded state (cycled), same for every setting."""
    nrec, n = states["qpos"].shape[:2]
    sb = _SettingBatch(model, setting, n, num_threads)
    wall = cpu = 0.0
    niter_sum = ncon_sum = 0.0
    unstable_steps = 0  # simulation steps that MuJoCo found unstable and reset: their cost is a reset's
    for i in range(steps):
        j = i % nrec
        sb.set_state(states["qpos"][j], states["qvel"][j], states["qacc_warmstart"][j])
        sb.ctrl[:] = states["ctrl"][j]
        w, c, bad = sb.step()
        unstable = sb.unstable()
        unstable[bad] = True
        unstable_steps += int(unstable.sum())
        wall, cpu = wall + w, cpu + c
        niter_sum += float(sb.solver_iterations().mean())
        ncon_sum += float(sb.ncon.mean())
        if progress:
            progress(1)
    out = _rate(n, steps, wall, cpu)
    out["mean_solver_iterations"] = niter_sum / steps
    out["mean_contacts"] = ncon_sum / steps
    out["unstable_sim_steps"] = unstable_steps
    return out


def deviation(ref: dict, other: dict, keep: np.ndarray | None = None) -> dict | None:
    """Trajectory deviation at one checkpoint: other's state against the reference's, over
    the envs in `keep` (default all); None when keep holds none."""
    keep = np.ones(len(ref["qpos"]), dtype=bool) if keep is None else keep
    if not keep.any():
        return None
    ref = {k: ref[k][keep] for k in ("qpos", "qvel", "fell")}
    other = {k: other[k][keep] for k in ("qpos", "qvel", "fell")}
    dq = other["qpos"][:, 7:] - ref["qpos"][:, 7:]
    dp = np.linalg.norm(other["qpos"][:, 0:3] - ref["qpos"][:, 0:3], axis=1)
    same = (other["qpos"] == ref["qpos"]).all(axis=1) & (other["qvel"] == ref["qvel"]).all(axis=1)
    return {
        "envs_compared": int(keep.sum()),
        "joint_rms_rad": float(np.sqrt(np.mean(dq * dq))),
        "joint_max_rad": float(np.abs(dq).max()),
        "pelvis_err_mean_m": float(dp.mean()),
        "pelvis_err_median_m": float(np.median(dp)),
        "pelvis_err_max_m": float(dp.max()),
        "fall_differs_frac": float(np.mean(other["fell"] != ref["fell"])),
        "fallen_frac": float(np.mean(other["fell"])),
        "identical_frac": float(np.mean(same)),
    }


def fall_timing(
    ref_first_fall: np.ndarray, other_first_fall: np.ndarray, keep: np.ndarray | None = None
) -> dict | None:
    """When the envs first fell, against the reference, over the whole rollout (-1: never),
    over the envs in `keep` (default all); None when keep holds none."""
    if keep is not None:
        if not keep.any():
            return None
        ref_first_fall, other_first_fall = ref_first_fall[keep], other_first_fall[keep]
    ref_fell, other_fell = ref_first_fall > 0, other_first_fall > 0
    both = ref_fell & other_fell
    diff = np.abs(other_first_fall[both] - ref_first_fall[both])
    return {
        "fell_frac": float(np.mean(other_fell)),
        "fell_in_one_only_frac": float(np.mean(ref_fell != other_fell)),
        "fall_step_differs_frac": float(np.mean(both & (other_first_fall != ref_first_fall))),
        "fall_step_mean_abs_diff": float(diff.mean()) if diff.size else 0.0,
    }


# ---------------------------------------------------------------------- the study


def study_steps(num_settings: int, steps: int, repeats: int = 1) -> int:
    """Control steps the study runs (for a progress bar): per setting and scenario, one
    rollout and `repeats` replays."""
    return num_settings * len(SCENARIOS) * (1 + repeats) * steps


def _mean_cost(rounds: list[dict], ref_rounds: list[dict]) -> dict:
    """Rates averaged over the cost rounds; speed-ups against the reference of the same round,
    None where either went unstable (a reset's cost is no solver's)."""
    cpu_ratio = [r["env_steps_per_cpu_s"] / q["env_steps_per_cpu_s"] for r, q in zip(rounds, ref_rounds)]
    wall_ratio = [r["env_steps_per_s"] / q["env_steps_per_s"] for r, q in zip(rounds, ref_rounds)]
    unstable = sum(r["unstable_sim_steps"] for r in rounds)
    stable = unstable == 0 and not any(q["unstable_sim_steps"] for q in ref_rounds)
    return {
        "env_steps_per_s": float(np.mean([r["env_steps_per_s"] for r in rounds])),
        "env_steps_per_cpu_s": float(np.mean([r["env_steps_per_cpu_s"] for r in rounds])),
        "cpu_speedup_vs_reference": float(np.mean(cpu_ratio)) if stable else None,
        "cpu_speedup_min": float(np.min(cpu_ratio)) if stable else None,
        "cpu_speedup_max": float(np.max(cpu_ratio)) if stable else None,
        "wall_speedup_vs_reference": float(np.mean(wall_ratio)) if stable else None,
        "mean_solver_iterations": rounds[0]["mean_solver_iterations"],
        "mean_contacts": rounds[0]["mean_contacts"],
        "unstable_sim_steps": unstable,
        "rounds": rounds,
    }


def _measure(model, settings, qpos0, qvel0, controls, num_threads, ckpts, window, steps, repeats, progress):
    """The free-running rollouts of every setting, and `repeats` rounds of its cost on the
    reference's states: (rollouts[k][scenario], rounds[round][k][scenario])."""
    # Free-running rollouts (the first setting's states are recorded for the replays).
    rollouts: list[dict] = []
    ref_states: dict[str, dict] = {}
    for k, s in enumerate(settings):
        per = {}
        for sc in SCENARIOS:
            r = rollout(
                model, s, qpos0, qvel0, controls[sc], num_threads, ckpts,
                record_states=window[sc] if k == 0 else 0, progress=progress,
            )
            if k == 0:
                ref_states[sc] = r.pop("states")
            per[sc] = r
        rollouts.append(per)

    # Cost on identical states: every setting steps from the reference's states.
    rounds: list[list[dict]] = [[{} for _ in settings] for _ in range(repeats)]
    for r in range(repeats):
        order = range(len(settings)) if r % 2 == 0 else reversed(range(len(settings)))
        for k in order:
            for sc in SCENARIOS:
                rounds[r][k][sc] = replay_cost(model, settings[k], ref_states[sc], steps, num_threads, progress)
    return rollouts, rounds


def _row(setting: SolverSetting, k: int, rollouts: list[dict], rounds: list[list[dict]], ckpts: list[int]) -> dict:
    """Setting k's record. An unstable simulation (MuJoCo reset it) measures a reset, not the
    solver: such a rollout gives no speed-up, and its deviations cover only the envs that
    stayed stable in both it and the reference (None when none did); `unstable` says so."""
    row = {"setting": setting.as_dict(), "cost": {}, "free_running": {}, "deviation": {}, "fall_timing": {}}
    for sc in SCENARIOS:
        ref, fr = rollouts[0][sc], rollouts[k][sc]
        row["cost"][sc] = _mean_cost([rd[k][sc] for rd in rounds], [rd[0][sc] for rd in rounds])
        stable = fr["unstable_envs"] == 0 and ref["unstable_envs"] == 0
        row["free_running"][sc] = {
            **fr["rate"],
            "cpu_speedup_vs_reference": fr["rate"]["env_steps_per_cpu_s"] / ref["rate"]["env_steps_per_cpu_s"]
            if stable else None,
            "mean_solver_iterations": fr["mean_solver_iterations"],
            "mean_contacts": fr["mean_contacts"],
            "unstable_envs": fr["unstable_envs"],
        }
        keep = ~(ref["unstable"] | fr["unstable"])
        row["deviation"][sc] = {str(c): deviation(ref["checkpoints"][c], fr["checkpoints"][c], keep) for c in ckpts}
        row["fall_timing"][sc] = fall_timing(ref["first_fall"], fr["first_fall"], keep)
    row["unstable"] = any(row["free_running"][sc]["unstable_envs"] or row["cost"][sc]["unstable_sim_steps"]
                          for sc in SCENARIOS)
    return row


def run_solver_study(
    model: mujoco.MjModel,
    settings: Sequence[SolverSetting] | None = None,
    num_envs: int = 256,
    steps: int = 100,
    num_threads: int = 1,
    seed: int = 0,
    checkpoints: Iterable[int] = DEFAULT_CHECKPOINTS,
    stand_window: int = 25,
    repeats: int = 1,
    progress: Progress | None = None,
) -> dict:
    """Cost and trajectory deviation of each setting; the first setting is the reference.

    stand_window: the "stand" cost cycles over the reference's first stand_window states,
    when the robots still stand (the standing rollout tips over after about a second).
    repeats: rounds of cost measurement, the settings in forward order in even rounds and
    in reverse order in odd ones, so that a slow drift of the machine's load does not
    favour the settings measured first.
    """
    settings = list(settings) if settings is not None else default_sweep()
    if not settings:
        raise ValueError("no solver settings")
    if min(num_envs, steps, num_threads, stand_window, repeats) < 1:
        raise ValueError("num_envs, steps, num_threads, stand_window and repeats must be >= 1")
    names = [s.name for s in settings]
    if len(set(names)) != len(names):
        raise ValueError(f"solver setting names must be unique: {names}")
    ckpts = checkpoints_for(steps, checkpoints)
    qpos0, qvel0 = initial_states(model, num_envs, seed)
    controls = {sc: control_sequence(model, sc, num_envs, steps, seed) for sc in SCENARIOS}
    window = {"stand": min(stand_window, steps), "random": steps}
    load_before = os.getloadavg()

    with mujoco_log_silenced():
        rollouts, rounds = _measure(model, settings, qpos0, qvel0, controls, num_threads, ckpts, window, steps,
                                    repeats, progress)
    rows = [_row(s, k, rollouts, rounds, ckpts) for k, s in enumerate(settings)]

    return {
        "num_envs": num_envs,
        "steps": steps,
        "threads": num_threads,
        "seed": seed,
        "substeps": g1.N_SUBSTEPS,
        "control_dt": g1.CONTROL_DT,
        "checkpoints": ckpts,
        "stand_window": window["stand"],
        "repeats": repeats,
        "scenarios": list(SCENARIOS),
        "reference": settings[0].as_dict(),
        "model_opt": {
            "solver": mujoco.mjtSolver(model.opt.solver).name,
            "iterations": int(model.opt.iterations),
            "ls_iterations": int(model.opt.ls_iterations),
            "tolerance": float(model.opt.tolerance),
            "ls_tolerance": float(model.opt.ls_tolerance),
        },
        "model_sha256": g1.model_bytes_sha256(model),
        "mujoco_version": mujoco.__version__,
        "numpy_version": np.__version__,
        "python": platform.python_version(),
        "processor": cpu_model(),
        "cpus_available": len(os.sched_getaffinity(0)),
        "loadavg_before": list(load_before),
        "loadavg_after": list(os.getloadavg()),
        "results": rows,
    }

