"""Reference side of the model and physics differential tests.

Run with the reference's interpreter (a virtual environment holding unilab[mujoco]==1.5.2,
so MuJoCo 3.11), never with ours:

    REF_PYTHON unilab_model_worker.py REQUEST.npz OUT.npz

The request names the G1 STL folder of the asset package (`asset_dir`): the reference
scene loads visual meshes that UniLab downloads at run time; Menagerie's files are the
same meshes and carry no physics (visual geoms do not collide and have no mass).

ops:
  model   -> facts of the compiled reference scene (collision geoms, excludes, actuators,
             options, sensors, sites), as arrays keyed by name lists
  physics -> from each given (qpos, qvel, ctrl), `nstep` mj_step calls; the next state,
             sensordata, contact count and total normal force
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

import mujoco

# `step_states` is also imported by our side of the physics test (tests/reference), so that
# both MuJoCo versions are measured by the same code; only main() needs the reference.


def reference_scene(asset_dir: str) -> Path:
    """A temporary copy of the reference's G1 folder with the meshes filled in."""
    import unilab

    src = Path(unilab.__file__).parent / "assets" / "robots" / "g1"
    dst = Path(tempfile.mkdtemp(prefix="unilab_g1_")) / "g1"
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("assets", "isaacsim"))
    os.symlink(asset_dir, dst / "assets")
    return dst / "scene_flat.xml"


def colliding(m):
    return [g for g in range(m.ngeom) if m.geom_contype[g] or m.geom_conaffinity[g]]


def model_facts(m) -> dict:
    cols = colliding(m)
    excl = sorted(
        sorted((m.body(int(s) >> 16).name, m.body(int(s) & 0xFFFF).name)) for s in m.exclude_signature
    )
    opt = m.opt
    return {
        "geom_names": np.array([m.geom(g).name for g in cols]),
        "geom_body": np.array([m.body(m.geom_bodyid[g]).name for g in cols]),
        "geom_type": m.geom_type[cols],
        "geom_size": m.geom_size[cols],
        "geom_pos": m.geom_pos[cols],
        "geom_quat": m.geom_quat[cols],
        "geom_friction": m.geom_friction[cols],
        "geom_priority": m.geom_priority[cols],
        "geom_condim": m.geom_condim[cols],
        "geom_solref": m.geom_solref[cols],
        "geom_solimp": m.geom_solimp[cols],
        "geom_margin": m.geom_margin[cols],
        "exclude_pairs": np.array(excl),
        "actuator_names": np.array([m.actuator(i).name for i in range(m.nu)]),
        "actuator_gainprm": m.actuator_gainprm[:, :3],
        "actuator_biasprm": m.actuator_biasprm[:, :3],
        "actuator_forcerange": m.actuator_forcerange,
        "actuator_forcelimited": m.actuator_forcelimited,
        "actuator_ctrllimited": m.actuator_ctrllimited,
        "joint_names": np.array([m.joint(j).name for j in range(m.njnt)]),
        "jnt_range": m.jnt_range,
        "jnt_limited": m.jnt_limited,
        "jnt_actfrclimited": m.jnt_actfrclimited,
        "dof_armature": m.dof_armature,
        "dof_frictionloss": m.dof_frictionloss,
        "dof_damping": m.dof_damping,
        "body_names": np.array([m.body(b).name for b in range(m.nbody)]),
        "body_mass": m.body_mass,
        "body_inertia": m.body_inertia,
        "body_pos": m.body_pos,
        "body_quat": m.body_quat,
        "body_ipos": m.body_ipos,
        "body_iquat": m.body_iquat,
        "site_names": np.array([m.site(i).name for i in range(m.nsite)]),
        "site_body": np.array([m.body(m.site_bodyid[i]).name for i in range(m.nsite)]),
        "site_pos": m.site_pos,
        "sensor_names": np.array([m.sensor(i).name for i in range(m.nsensor)]),
        "sensor_type": m.sensor_type,
        "sensor_dim": m.sensor_dim,
        "sensor_cutoff": m.sensor_cutoff,
        "sensor_noise": m.sensor_noise,
        "sensor_intprm": m.sensor_intprm,
        "opt": np.array(json.dumps({
            "timestep": opt.timestep, "integrator": int(opt.integrator), "solver": int(opt.solver),
            "cone": int(opt.cone), "iterations": int(opt.iterations), "ls_iterations": int(opt.ls_iterations),
            "tolerance": opt.tolerance, "ls_tolerance": opt.ls_tolerance, "impratio": opt.impratio,
            "noslip_iterations": int(opt.noslip_iterations), "gravity": list(opt.gravity),
            "disableflags": int(opt.disableflags), "enableflags": int(opt.enableflags),
            "jacobian": int(opt.jacobian),
        })),
        "key_qpos": m.key("stand").qpos,
        "key_ctrl": m.key("stand").ctrl,
        "mujoco_version": np.array(mujoco.__version__),
        "unilab_version": np.array(importlib.metadata.version("unilab")),
    }


def step_states(m, qpos, qvel, ctrl, nstep: int) -> dict:
    d = mujoco.MjData(m)
    out = {k: [] for k in ("qpos", "qvel", "sensordata", "ncon", "normal_force", "ncon0", "normal_force0")}
    force = np.zeros(6)
    for q, v, u in zip(qpos, qvel, ctrl):
        mujoco.mj_resetData(m, d)
        d.qpos[:], d.qvel[:], d.ctrl[:] = q, v, u
        mujoco.mj_forward(m, d)  # contacts and forces at the given state
        out["ncon0"].append(d.ncon)
        total = 0.0
        for i in range(d.ncon):
            mujoco.mj_contactForce(m, d, i, force)
            total += force[0]
        out["normal_force0"].append(total)
        mujoco.mj_step(m, d, nstep=nstep)
        out["qpos"].append(d.qpos.copy())
        out["qvel"].append(d.qvel.copy())
        out["sensordata"].append(d.sensordata.copy())
        out["ncon"].append(d.ncon)
    return {k: np.array(v) for k, v in out.items()}


def main(request: str, output: str) -> None:
    try:
        import unilab  # noqa: F401
    except ImportError as e:  # not the reference's environment
        print(f"unilab_model_worker: cannot import the reference ({e})", file=sys.stderr)
        sys.exit(3)
    req = np.load(request)
    m = mujoco.MjModel.from_xml_path(str(reference_scene(str(req["asset_dir"]))))
    op = str(req["op"])
    if op == "model":
        result = model_facts(m)
    elif op == "physics":
        result = step_states(m, req["qpos"], req["qvel"], req["ctrl"], int(req["nstep"]))
    else:
        raise SystemExit(f"unilab_model_worker: unknown op {op!r}")
    np.savez(output, **result)


if __name__ == "__main__":
    main(*sys.argv[1:3])
