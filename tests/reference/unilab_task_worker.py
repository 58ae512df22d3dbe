"""Reference worker: evaluate unilab 1.5.2's own G1WalkFlat code for differential tests.

Run it with the REFERENCE venv (not ours):

    .venv-ref/bin/python tests/reference/unilab_task_worker.py REQUEST.npz OUT.npz

Everything is computed by the reference's own objects (Hydra config tree
``unilab/conf/sac``, ``registry``-built ``G1WalkManagerBasedEnv`` on the MuJoCo
backend, its observation/reward/termination/curriculum term instances). Nothing
here re-implements a formula; the worker only writes state into the reference
env and reads its outputs. CPU only (CUDA is hidden before torch is imported).

Meshes
------
The reference scene (``robots/g1/scene_flat.xml`` -> ``g1.xml``, ``meshdir="assets"``)
needs STL files that the wheel does not ship (unilab downloads them from Hugging
Face at run time). The worker takes a folder holding them (MuJoCo Menagerie's
``unitree_g1/assets/*.STL`` fits; every mesh file named in g1.xml must be there):

  * request key ``asset_dir`` (string), or, if absent,
  * environment variable ``SACSCALE_G1_ASSETS``.

It copies the reference's two XML files into a fresh temp dir, symlinks the STL
files into ``<tmp>/assets`` and points ``env.scene.model_file`` at the temp scene
(a Hydra override). The installed package is never modified. The temp path must
not contain ``robots/g1``: unilab's asset hub would then try to download into the
package, so the temp dir is named ``sacscale_unilab_g1_*``.

Requests (``.npz``; a string field ``op`` plus arrays) and responses
-------------------------------------------------------------------
op="task"     in : qpos (B,36), qvel (B,35) [default 0], command (B,3) [vx,vy,wz],
                   gait_phase (B,2) [left,right rad], last_action (B,29),
                   action (B,29)  (missing optional arrays default to zeros), B >= 1
                   optional: bootstrap_reset (0/1, default 0), seed (int, with it)
              out: policy_obs (B,98), critic_obs (B,101),
                   reward_<term> (B,) UNWEIGHTED, for tracking_lin_vel,
                   tracking_ang_vel, penalty_ang_vel_xy, penalty_orientation,
                   penalty_action_rate, pose, penalty_feet_ori, feet_phase, alive;
                   weight_<term> () the weight in force (penalties are already
                   multiplied by the curriculum's initial 0.0625);
                   reward_total (B,) RewardManager.compute(dt) = sum(w*v)*dt;
                   term_tilt, term_base_height (B,) bool;
                   sensor_<name> (B,k) the packed sensor rows the terms read;
                   policy_obs_layout / critic_obs_layout: "term:start:stop" strings.
op="curriculum" in: num_envs (scalar), lengths (flat float array of episode
                   lengths, integer-valued), counts (int array, one per step: how
                   many of the flat lengths end at that step, in order)
              out: scale (S,), average (S,) after each step's update,
                   penalty_weights (S,P) weights in the reward manager after each
                   step, penalty_names (P,) str, window_size (), initial_scale ().
op="reset_stats" in: num_envs (scalar, e.g. 4096), optional seed (int)
              out: gait_phase (B,2), command (B,3), kp (B,29), kd (B,29),
                   kp_nominal (29,), kd_nominal (29,), qpos (B,7) root, qvel (B,6)
                   root, qpos_full (B,36), qvel_full (B,35),
                   episode_length_buf (B,) int64, info_steps (B,) int64,
                   max_episode_length (), actuator_names (29,) str.
Every response also holds elapsed_s () and op.

Exit codes: 0 ok, 2 bad request / missing meshes, 3 reference not importable,
1 anything else (traceback on stderr).

How op="task" evaluates the reference (and caveats)
---------------------------------------------------
* The env is built exactly as ``train_sac.py`` does: Hydra compose of
  ``conf/sac/config.yaml`` with ``task=g1_walk_flat/mujoco``, then
  ``train_offpolicy.build_offpolicy_env_cfg_override("sac", cfg)`` and
  ``config_adapter.create_env``. Extra overrides: the temp scene file,
  ``training.collector_tensor_device=cpu`` and
  ``env.observations.policy.enable_corruption=false`` (the reference's own switch
  that drops the joint pos/vel noise; the critic group never had noise).
* No ``env.init_state()`` by default (request ``bootstrap_reset=1`` runs the
  reference's bootstrap reset first): every per-env input the terms read is
  overwritten below, and the outputs are bit-identical either way (checked);
  PD gains do not enter any observation/reward.
* State: ``backend.set_state_tensor(rows, qpos, qvel)`` - the backend's public
  reset-write path, which ends in mjbatch ``forward`` (= mj_forward): sensors
  are those of mj_forward at the GIVEN qpos/qvel, i.e. position/velocity stage
  values at the state itself (not post-mj_step values; for a state produced by
  mj_step those agree). That path takes float32 tensors only, so qpos/qvel
  are rounded to float32 before being written (the reference's own resets do
  the same); MuJoCo then runs in float64 and the packed reads are float32.
  The scene read cache is invalidated and the packed read plan refreshed (what
  the env does after any in-phase mutation), then all terms run inside
  ``scene._scoped_state_reads()`` as in ``update_state``.
* Command: written in place into the ``twist`` term's command tensor (no dead
  zone applied - that only happens at resampling).
* Gait phase: written in place into the G1 gait context shared by the
  ``gait_phase`` observation and the ``feet_phase`` reward; the step counter is
  not advanced, so the value is used as given (no wrapping to [0, 2pi)).
* Actions: ``action_manager.process_action(last_action)`` then
  ``process_action(action)`` - the manager's own history shift, so
  prev_action = last_action and action = action. NOTE: the observation slot
  "actions" (``mdp.last_action`` -> the term's raw_action) therefore holds
  ``action``, the action applied in this step, exactly as after a real step;
  last_action only enters penalty_action_rate.
* Observations: ``observation_manager.compute(update_history=True)`` (no history/
  delay terms in this task, so nothing else is affected).
* Rewards: each term's ``func(env, **params)`` from the reward manager, i.e. what
  ``RewardManager._compute_term`` calls: unweighted, float32.
* Terminations: the ``tilt`` / ``base_height`` term funcs called the same way.
  base_height reads the pelvis body position (= qpos z for the free joint).
* The torso gyro sensor has ``cutoff="34.9"`` in g1.xml: MuJoCo clamps it, so
  base_ang_vel / tracking_ang_vel / penalty_ang_vel_xy saturate for |w|>34.9.

op="curriculum": the real ``G1PenaltyCurriculum`` instance of a real env with
num_envs envs (no init_state, so its tracker starts at 0 and scale at 0.0625),
driven through its ``reset_scoped`` method - the call
``CurriculumManager.compute(env_ids)`` makes inside ``env.reset``. For a step with
k ended episodes: reset_buf rows [0,k) True, episode_length_buf[:k] = lengths
(int64, like the env's buffer), env_ids = [0,k). A step with k = 0 is skipped,
as the reference's autoreset never calls reset (hence the curriculum) without
done rows; scale/average are then repeated. k must be <= num_envs. The
tracker's window is max(1, int(1000 * num_envs / 4096)).

op="reset_stats": ``env.seed(seed)`` (if given) and ``env.init_state()`` - the
env's first (bootstrap) reset of all rows, what a training run starts with.
Read back: gait context phase, twist command, per-env kp/kd via
``backend.get_reset_term_default("kp"/"kd")`` (live per-env
actuator_gainprm[:,0] and -actuator_biasprm[:,2] of the mjbatch pool, model
actuator order = action order), nominal gains via ``backend.get_actuator_gains()``,
qpos/qvel via ``backend.get_physics_state()``. Caveats seen in the reference:
the right phase is left + pi NOT wrapped, so it lies in [pi, 3pi) until the
first step advances (and wraps) it; episode_length_buf starts at random
offsets in [0, max_episode_length) (the reference desynchronizes timeouts);
root qvel[3:6] is MuJoCo's body-frame angular velocity, so its x/y spread
exceeds the +/-0.5 sampling range (yaw rotation mixes them), while qvel[0:3]
(world frame) stays within +/-0.5. init_state costs ~5-12 s (torch.compile).
"""

from __future__ import annotations

import os
import sys

# CPU only: hide GPUs before torch is imported anywhere.
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import shutil  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import xml.etree.ElementTree as ET  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

try:
    import torch
    from hydra import compose, initialize_config_dir

    import unilab
    from unilab.assets import ASSETS_ROOT_PATH
    from unilab.base.config_adapter import create_env
    from unilab.scripts.train_offpolicy import build_offpolicy_env_cfg_override
    from unilab.tasks.locomotion.g1.manager_terms import G1GaitPhase, G1PenaltyCurriculum
except Exception as exc:  # ImportError, or a broken install raising anything else
    print(
        f"unilab_task_worker: cannot import the reference (unilab==1.5.2 + hydra + torch): "
        f"{type(exc).__name__}: {exc}\n"
        "Run this script with the reference venv, e.g. .venv-ref/bin/python",
        file=sys.stderr,
    )
    sys.exit(3)


TASK = "g1_walk_flat/mujoco"
REWARD_TERMS = (
    "tracking_lin_vel",
    "tracking_ang_vel",
    "penalty_ang_vel_xy",
    "penalty_orientation",
    "penalty_action_rate",
    "pose",
    "penalty_feet_ori",
    "feet_phase",
    "alive",
)
TERMINATION_TERMS = ("tilt", "base_height")
# Sensors read by the observation/reward terms; returned for diagnosing mismatches.
SENSORS = (
    "torso_gyro",
    "torso_upvector",
    "pelvis_local_linvel",
    "left_foot_pos",
    "right_foot_pos",
    "left_foot_quat",
    "right_foot_quat",
)


class RequestError(Exception):
    """Bad request or missing inputs (exit code 2)."""


# --------------------------------------------------------------------------- scene


def _mesh_files(xml_path: Path) -> list[str]:
    return [m.get("file") for m in ET.parse(xml_path).getroot().iter("mesh") if m.get("file")]


def make_scene_dir(asset_dir: str) -> Path:
    """Temp copy of the reference's G1 XMLs with the meshes symlinked in."""
    src = ASSETS_ROOT_PATH / "robots" / "g1"
    assets = Path(asset_dir).expanduser().resolve()
    if not assets.is_dir():
        raise RequestError(f"asset_dir {assets} is not a directory")
    missing = [f for f in _mesh_files(src / "g1.xml") if not (assets / f).is_file()]
    if missing:
        raise RequestError(f"asset_dir {assets} lacks mesh files: {missing}")
    # Named without 'robots/g1' so unilab's asset hub does not try to download.
    tmp = Path(tempfile.mkdtemp(prefix="sacscale_unilab_g1_"))
    for name in ("g1.xml", "scene_flat.xml"):
        shutil.copy2(src / name, tmp / name)
    (tmp / "assets").mkdir()
    for f in _mesh_files(src / "g1.xml"):
        (tmp / "assets" / f).symlink_to(assets / f)
    return tmp


def build_env(scene_file: Path, num_envs: int):
    """Compose the SAC Hydra tree like train_sac.py and build the reference env on CPU."""
    conf_dir = Path(unilab.__file__).parent / "conf" / "sac"
    overrides = [
        f"task={TASK}",
        f"algo.num_envs={num_envs}",
        f"env.scene.model_file={scene_file}",
        "training.collector_tensor_device=cpu",
        # The reference's own noise switch (policy group only has noise terms).
        "env.observations.policy.enable_corruption=false",
    ]
    with initialize_config_dir(config_dir=str(conf_dir), version_base="1.3"):
        cfg = compose(config_name="config", overrides=overrides)
    env_override = build_offpolicy_env_cfg_override("sac", cfg)
    env = create_env(cfg, num_envs=num_envs, env_cfg_override=env_override)
    if str(env.device) != "cpu":
        raise RuntimeError(f"reference env landed on {env.device}, expected cpu")
    return env


# --------------------------------------------------------------------------- helpers


def _f32(req, key, shape, default_zero=True):
    if key not in req:
        if not default_zero:
            raise RequestError(f"request lacks '{key}'")
        return torch.zeros(shape, dtype=torch.float32)
    arr = np.asarray(req[key], dtype=np.float64)
    if arr.shape != shape:
        raise RequestError(f"'{key}' has shape {arr.shape}, expected {shape}")
    if not np.isfinite(arr).all():
        raise RequestError(f"'{key}' holds non-finite values")
    return torch.from_numpy(arr.astype(np.float32)).contiguous()


def _scalar_int(req, key, default=None):
    if key not in req:
        if default is None:
            raise RequestError(f"request lacks '{key}'")
        return default
    return int(np.asarray(req[key]).reshape(()))


def _gait_context(env):
    """The gait context shared by the gait observation and the gait rewards."""
    func = env.observation_manager.get_term_cfg("policy", "gait_phase").func
    if not isinstance(func, G1GaitPhase):
        raise RuntimeError(f"unexpected gait_phase term {type(func).__name__}")
    return func._context  # no public accessor; the terms share this object


def _layout(env, group):
    names = env.observation_manager.active_terms[group]
    dims = env.observation_manager.group_obs_term_dim[group]
    out, start = [], 0
    for name, dim in zip(names, dims, strict=True):
        width = int(np.prod(dim))
        out.append(f"{name}:{start}:{start + width}")
        start += width
    return np.array(out)


# --------------------------------------------------------------------------- ops


def op_task(req, scene_file):
    if "qpos" not in req:
        raise RequestError("op=task needs 'qpos' (B,36)")
    B = int(np.asarray(req["qpos"]).shape[0])
    if B < 1:
        raise RequestError("op=task needs at least one row")
    env = build_env(scene_file, B)
    try:
        backend = env.backend
        nq, nv = int(backend.nq), int(backend.nv)
        nu = int(env.action_manager.total_action_dim)
        qpos = _f32(req, "qpos", (B, nq), default_zero=False)
        qvel = _f32(req, "qvel", (B, nv))
        command = _f32(req, "command", (B, 3))
        phase = _f32(req, "gait_phase", (B, 2))
        last_action = _f32(req, "last_action", (B, nu))
        action = _f32(req, "action", (B, nu))

        # Optional bootstrap reset. Off by default: it costs ~5 s (a torch.compile
        # in the fused root reset) and every input below overwrites what it sets;
        # outputs were checked bit-identical with and without it.
        if _scalar_int(req, "bootstrap_reset", default=0):
            if "seed" in req:
                env.seed(_scalar_int(req, "seed"))
            env.init_state()

        # Physics state: public reset-write path, ends in mj_forward (sensors valid).
        backend.set_state_tensor(torch.arange(B, dtype=torch.int64), qpos, qvel)
        env.scene._invalidate_state_reads()  # what the env does after in-phase mutations
        env.scene.read_plan.refresh()

        env.command_manager.get_term("twist").command.copy_(command)

        ctx = _gait_context(env)
        if ctx.last_counter != int(env.common_step_counter):
            raise RuntimeError("gait context counter out of sync; phase would be advanced")
        ctx.phase.copy_(phase)

        # The manager's own shift: prev_action <- last_action, action <- action.
        env.action_manager.process_action(last_action)
        env.action_manager.process_action(action)

        out = {}
        with env.scene._scoped_state_reads():
            obs = env.observation_manager.compute(update_history=True)
            out["policy_obs"] = obs[env.cfg.policy_observation_group].numpy().copy()
            out["critic_obs"] = obs[env.cfg.critic_observation_group].numpy().copy()

            rm = env.reward_manager
            for name in REWARD_TERMS:
                term_cfg = rm.get_term_cfg(name)
                value = term_cfg.func(env, **term_cfg.params)  # = RewardManager._compute_term
                out[f"reward_{name}"] = value.detach().numpy().astype(np.float32).copy()
                out[f"weight_{name}"] = np.float64(term_cfg.weight)
            extra = sorted(set(rm.active_terms) - set(REWARD_TERMS))
            if extra:
                raise RuntimeError(f"reference has reward terms the worker does not report: {extra}")
            out["reward_total"] = rm.compute(dt=env.step_dt).numpy().copy()

            tm = env.termination_manager
            for name in TERMINATION_TERMS:
                term_cfg = tm.get_term_cfg(name)
                out[f"term_{name}"] = term_cfg.func(env, **term_cfg.params).numpy().astype(bool)

            views = env.scene.read_plan.sensor_tensor_views(env.scene["robot"], SENSORS).values
            for name in SENSORS:
                out[f"sensor_{name}"] = views[name].numpy().copy()

        out["policy_obs_layout"] = _layout(env, env.cfg.policy_observation_group)
        out["critic_obs_layout"] = _layout(env, env.cfg.critic_observation_group)
        return out
    finally:
        env.close()


def op_curriculum(req, scene_file):
    num_envs = _scalar_int(req, "num_envs")
    if "lengths" not in req or "counts" not in req:
        raise RequestError("op=curriculum needs 'lengths' and 'counts'")
    lengths = np.asarray(req["lengths"], dtype=np.float64).reshape(-1)
    counts = np.asarray(req["counts"]).reshape(-1).astype(np.int64)
    if (counts < 0).any() or counts.sum() != lengths.size:
        raise RequestError(f"counts must be >= 0 and sum to len(lengths)={lengths.size}")
    if counts.size and counts.max() > num_envs:
        raise RequestError(f"a step ends {counts.max()} episodes but num_envs={num_envs}")
    rounded = np.rint(lengths)
    if not np.allclose(rounded, lengths, rtol=0.0, atol=1e-9):
        raise RequestError("lengths must be integer-valued (the env's buffer is int64)")

    env = build_env(scene_file, num_envs)  # no init_state: tracker fresh at 0
    try:
        term_cfg = env.curriculum_manager.get_term_cfg("penalty_scaling")
        term = term_cfg.func
        if not isinstance(term, G1PenaltyCurriculum):
            raise RuntimeError(f"unexpected curriculum term {type(term).__name__}")
        rm = env.reward_manager
        penalty_names = [n for n in rm.active_terms if n in term._original_weights]

        scales, averages, weights = [], [], []
        scale = float(term._current_scale)
        average = float(term._tracker.average.item())
        initial_scale = scale
        offset = 0
        for k in counts:
            if k > 0:
                env.reset_buf.fill_(False)
                env.reset_buf[:k] = True
                env.episode_length_buf.zero_()
                env.episode_length_buf[:k] = torch.from_numpy(rounded[offset : offset + k]).to(
                    torch.int64
                )
                env_ids = torch.arange(int(k), dtype=torch.int64)
                # What CurriculumManager.compute(env_ids) calls inside env.reset.
                state = term.reset_scoped(env, env_ids, **term_cfg.params)
                scale = float(state["penalty_scale"])
                average = float(state["average_episode_length"])
                offset += int(k)
            scales.append(scale)
            averages.append(average)
            weights.append([float(rm.get_term_cfg(n).weight) for n in penalty_names])
        return {
            "scale": np.asarray(scales, dtype=np.float64),
            "average": np.asarray(averages, dtype=np.float64),
            "penalty_weights": np.asarray(weights, dtype=np.float64).reshape(
                len(scales), len(penalty_names)
            ),
            "penalty_names": np.asarray(penalty_names),
            "window_size": np.int64(term._tracker.window_size),
            "initial_scale": np.float64(initial_scale),
        }
    finally:
        env.close()


def op_reset_stats(req, scene_file):
    num_envs = _scalar_int(req, "num_envs", default=4096)
    env = build_env(scene_file, num_envs)
    try:
        if "seed" in req:
            env.seed(_scalar_int(req, "seed"))
        state = env.init_state()  # the env's bootstrap reset of all rows
        backend = env.backend
        nq, nv = int(backend.nq), int(backend.nv)
        physics = np.asarray(backend.get_physics_state())  # [time, qpos, qvel]
        qpos = physics[:, 1 : 1 + nq]
        qvel = physics[:, 1 + nq : 1 + nq + nv]
        kp_nominal, kd_nominal = backend.get_actuator_gains()
        return {
            "gait_phase": _gait_context(env).phase.numpy().copy(),
            "command": env.command_manager.get_term("twist").command.numpy().copy(),
            "kp": np.asarray(backend.get_reset_term_default("kp"), dtype=np.float64),
            "kd": np.asarray(backend.get_reset_term_default("kd"), dtype=np.float64),
            "kp_nominal": np.asarray(kp_nominal, dtype=np.float64),
            "kd_nominal": np.asarray(kd_nominal, dtype=np.float64),
            "qpos": qpos[:, :7].copy(),
            "qvel": qvel[:, :6].copy(),
            "qpos_full": qpos.copy(),
            "qvel_full": qvel.copy(),
            "episode_length_buf": env.episode_length_buf.numpy().astype(np.int64),
            "info_steps": state.info["steps"].numpy().astype(np.int64),
            "max_episode_length": np.int64(env.max_episode_length),
            "actuator_names": np.asarray(backend.get_actuator_names()),
        }
    finally:
        env.close()


OPS = {"task": op_task, "curriculum": op_curriculum, "reset_stats": op_reset_stats}


def main(argv):
    if len(argv) != 3:
        print(f"usage: {argv[0]} REQUEST.npz OUT.npz", file=sys.stderr)
        return 2
    started = time.perf_counter()
    scene_dir = None
    try:
        with np.load(argv[1], allow_pickle=False) as data:
            req = {k: data[k] for k in data.files}
        if "op" not in req:
            raise RequestError("request lacks 'op'")
        op = str(req["op"].item() if req["op"].ndim == 0 else req["op"].reshape(-1)[0])
        if op not in OPS:
            raise RequestError(f"unknown op {op!r}; expected one of {sorted(OPS)}")
        asset_dir = str(req["asset_dir"]) if "asset_dir" in req else os.environ.get(
            "SACSCALE_G1_ASSETS"
        )
        if not asset_dir:
            raise RequestError("give the G1 mesh folder as request 'asset_dir' or SACSCALE_G1_ASSETS")
        scene_dir = make_scene_dir(asset_dir)
        with torch.no_grad():
            out = OPS[op](req, scene_dir / "scene_flat.xml")
        out["op"] = np.asarray(op)
        out["elapsed_s"] = np.float64(time.perf_counter() - started)
        np.savez(argv[2], **out)
        return 0
    except RequestError as exc:
        print(f"unilab_task_worker: bad request: {exc}", file=sys.stderr)
        return 2
    except Exception:
        traceback.print_exc()
        return 1
    finally:
        if scene_dir is not None:
            shutil.rmtree(scene_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
