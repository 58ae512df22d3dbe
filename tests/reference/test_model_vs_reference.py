"""Our G1WalkFlat model against the reference's compiled scene (unilab 1.5.2, MuJoCo 3.11).

Everything that shapes the physics is compared by name: the colliding geoms and their
contact parameters, excluded pairs, bodies, joints, actuators, the sites and sensors the
task reads, solver options and the standing keyframe. Values come from XML numbers on both
sides, so they must agree to float precision (1e-9); only quaternions are compared up to
sign (q and -q are one rotation)."""

from __future__ import annotations

import json

import mujoco
import numpy as np
import pytest

from sacscale.task import g1_model as g1

TOL = 1e-9


@pytest.fixture(scope="module")
def ref(run_reference):
    return run_reference("unilab_model_worker.py", "model")


def _by_name(names, *arrays):
    return {str(n): tuple(a[i] for a in arrays) for i, n in enumerate(names)}


def _colliders(m):
    cols = g1.colliding_geoms(m)
    return _by_name(
        [m.geom(g).name for g in cols],
        np.array([m.body(m.geom_bodyid[g]).name for g in cols]),
        m.geom_type[cols], m.geom_size[cols], m.geom_pos[cols], m.geom_quat[cols],
        m.geom_friction[cols], m.geom_priority[cols], m.geom_condim[cols],
        m.geom_solref[cols], m.geom_solimp[cols], m.geom_margin[cols],
    )


def _same_rotation(q1, q2):
    return abs(abs(float(np.dot(q1, q2))) - 1.0) < TOL


def test_versions(ref):
    assert str(ref["unilab_version"]) == "1.5.2"
    assert str(ref["mujoco_version"]).startswith("3.11")


def test_colliding_geoms(ref, ours):
    theirs = _by_name(
        ref["geom_names"], ref["geom_body"], ref["geom_type"], ref["geom_size"], ref["geom_pos"],
        ref["geom_quat"], ref["geom_friction"], ref["geom_priority"], ref["geom_condim"],
        ref["geom_solref"], ref["geom_solimp"], ref["geom_margin"],
    )
    mine = _colliders(ours)
    assert len(theirs) == 42
    assert sorted(mine) == sorted(theirs)
    fields = ("body", "type", "size", "pos", "quat", "friction", "priority", "condim", "solref", "solimp", "margin")
    for name, t in theirs.items():
        o = mine[name]
        for f, a, b in zip(fields, o, t):
            if f == "quat":
                assert _same_rotation(a, b), (name, f, a, b)
            elif f in ("body", "type", "priority", "condim"):
                assert a == b, (name, f, a, b)
            elif f == "size" and int(t[1]) == mujoco.mjtGeom.mjGEOM_PLANE:
                continue  # a plane's size is only its rendering extent
            else:
                np.testing.assert_allclose(a, b, atol=TOL, err_msg=f"{name} {f}")


def test_excluded_pairs(ref, ours):
    mine = sorted(
        sorted((ours.body(int(s) >> 16).name, ours.body(int(s) & 0xFFFF).name)) for s in ours.exclude_signature
    )
    assert [list(p) for p in ref["exclude_pairs"]] == [list(p) for p in mine]


def test_bodies_joints_actuators(ref, ours):
    assert list(ref["body_names"]) == [ours.body(b).name for b in range(ours.nbody)]
    for f in ("body_mass", "body_inertia", "body_pos", "body_ipos"):
        np.testing.assert_allclose(getattr(ours, f), ref[f], atol=TOL, err_msg=f)
    for b in range(ours.nbody):
        assert _same_rotation(ours.body_quat[b], ref["body_quat"][b])
        assert _same_rotation(ours.body_iquat[b], ref["body_iquat"][b])
    assert list(ref["joint_names"]) == [ours.joint(j).name for j in range(ours.njnt)]
    for f in ("jnt_range", "jnt_limited", "jnt_actfrclimited", "dof_armature", "dof_frictionloss", "dof_damping"):
        np.testing.assert_allclose(getattr(ours, f), ref[f], atol=TOL, err_msg=f)
    assert list(ref["actuator_names"]) == list(g1.JOINT_NAMES) == [ours.actuator(i).name for i in range(ours.nu)]
    np.testing.assert_allclose(ours.actuator_gainprm[:, :3], ref["actuator_gainprm"], atol=TOL)
    np.testing.assert_allclose(ours.actuator_biasprm[:, :3], ref["actuator_biasprm"], atol=TOL)
    np.testing.assert_allclose(ours.actuator_forcerange, ref["actuator_forcerange"], atol=TOL)
    np.testing.assert_array_equal(ours.actuator_forcelimited, ref["actuator_forcelimited"])
    # the reference does not clamp position targets to the joint range
    np.testing.assert_array_equal(ours.actuator_ctrllimited, ref["actuator_ctrllimited"])
    assert not ours.actuator_ctrllimited.any()


def test_sites_and_sensors(ref, ours):
    sites = _by_name(ref["site_names"], ref["site_body"], ref["site_pos"])
    for name in ("left_foot", "right_foot", "imu_in_torso", "imu_in_pelvis"):
        s = ours.site(name)
        assert ours.body(s.bodyid[0]).name == sites[name][0]
        np.testing.assert_allclose(s.pos, sites[name][1], atol=TOL, err_msg=name)
    assert list(ref["sensor_names"]) == [ours.sensor(i).name for i in range(ours.nsensor)]
    for f in ("sensor_type", "sensor_dim", "sensor_cutoff", "sensor_noise", "sensor_intprm"):
        np.testing.assert_allclose(getattr(ours, f), ref[f], atol=TOL, err_msg=f)
    assert ours.nsensordata == 49


def test_options_and_keyframe(ref, ours):
    theirs = json.loads(str(ref["opt"]))
    o = ours.opt
    mine = {
        "timestep": o.timestep, "integrator": int(o.integrator), "solver": int(o.solver), "cone": int(o.cone),
        "iterations": int(o.iterations), "ls_iterations": int(o.ls_iterations), "tolerance": o.tolerance,
        "ls_tolerance": o.ls_tolerance, "impratio": o.impratio, "noslip_iterations": int(o.noslip_iterations),
        "gravity": list(o.gravity), "disableflags": int(o.disableflags), "enableflags": int(o.enableflags),
        "jacobian": int(o.jacobian),
    }
    np.testing.assert_allclose(mine.pop("gravity"), theirs.pop("gravity"), atol=TOL)
    assert mine == pytest.approx(theirs)
    key = ours.key(g1.KEYFRAME)
    np.testing.assert_allclose(key.qpos, ref["key_qpos"], atol=TOL)
    np.testing.assert_allclose(key.ctrl, ref["key_ctrl"], atol=TOL)
