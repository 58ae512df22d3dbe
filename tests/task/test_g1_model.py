import json

import mujoco
import numpy as np
import pytest

from sacscale.task import g1_model as g1


def test_sizes_and_joint_order(g1_model):
    m = g1_model
    assert (m.nq, m.nv, m.nu) == (36, 35, 29)
    assert [m.actuator(i).name for i in range(m.nu)] == list(g1.JOINT_NAMES)
    assert g1.JOINT_NAMES[:6] == (
        "left_hip_pitch_joint", "left_hip_roll_joint", "left_hip_yaw_joint",
        "left_knee_joint", "left_ankle_pitch_joint", "left_ankle_roll_joint",
    )
    assert g1.JOINT_NAMES[12:15] == ("waist_yaw_joint", "waist_roll_joint", "waist_pitch_joint")
    assert g1.JOINT_NAMES[-1] == "right_wrist_yaw_joint"
    # each actuator drives the joint of the same name
    for i, name in enumerate(g1.JOINT_NAMES):
        assert m.actuator_trnid[i, 0] == m.joint(name).id


def test_options(g1_model):
    o = g1_model.opt
    assert o.timestep == pytest.approx(0.02 / 3)
    assert o.integrator == mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    assert o.solver == mujoco.mjtSolver.mjSOL_NEWTON
    assert o.cone == mujoco.mjtCone.mjCONE_PYRAMIDAL


def test_primitive_collision_set(g1_model):
    m = g1_model
    cols = g1.colliding_geoms(m)
    assert len(cols) == 42
    assert m.nmesh == 0  # visuals discarded
    types = m.geom_type[cols]
    allowed = (mujoco.mjtGeom.mjGEOM_PLANE, mujoco.mjtGeom.mjGEOM_SPHERE, mujoco.mjtGeom.mjGEOM_CAPSULE)
    assert {int(t) for t in types} <= {int(t) for t in allowed}
    assert np.sum(types == mujoco.mjtGeom.mjGEOM_PLANE) == 1
    for side in ("left", "right"):
        body = m.body(f"{side}_ankle_roll_link").id
        feet = [g for g in cols if m.geom_bodyid[g] == body]
        spheres = [g for g in feet if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_SPHERE]
        capsules = [g for g in feet if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_CAPSULE]
        assert len(spheres) == 4 and len(capsules) == 7 and len(feet) == 11
        assert np.allclose(m.geom_size[spheres, 0], 0.005)
        assert np.allclose(m.geom_size[capsules, 0], 0.01)
    # friction classes of the reference: feet 0.6 (sole spheres with priority 1), rest 1.0
    feet = {g for g in cols if "foot" in m.geom(g).name}
    assert len(feet) == 22
    for g in cols:
        name = m.geom(g).name
        sphere = name.endswith("_geom") and "foot_contact" in name
        assert m.geom_friction[g, 0] == pytest.approx(0.6 if g in feet else 1.0), name
        assert m.geom_priority[g] == (1 if sphere else 0), name
        assert m.geom_condim[g] == 3, name
    radius = {n: m.geom(n).size[0] for n in ("pelvis_collision", "head_collision", "torso_collision",
                                           "left_hip_collision", "left_thigh_collision", "left_shin_collision",
                                           "left_linkage_brace_collision", "right_hand_collision")}
    assert radius == pytest.approx({"pelvis_collision": 0.07, "head_collision": 0.06, "torso_collision": 0.09,
                                    "left_hip_collision": 0.06, "left_thigh_collision": 0.055,
                                    "left_shin_collision": 0.045, "left_linkage_brace_collision": 0.03,
                                    "right_hand_collision": 0.035})


def test_joints_and_actuators(g1_model):
    m = g1_model
    hinges = m.jnt_type == mujoco.mjtJoint.mjJNT_HINGE
    assert hinges.sum() == 29
    dofs = m.jnt_dofadr[hinges]
    assert np.allclose(m.dof_armature[dofs], 0.01)
    assert np.allclose(m.dof_frictionloss[dofs], 0.3)
    expect = {  # joint: (kp, kv, force limit), from the task spec
        "left_hip_pitch_joint": (40.179, 2.558, 88), "right_hip_roll_joint": (99.098, 6.309, 139),
        "left_knee_joint": (99.098, 6.309, 139), "waist_yaw_joint": (40.179, 2.558, 88),
        "waist_pitch_joint": (28.501, 1.814, 50), "right_ankle_roll_joint": (28.501, 1.814, 50),
        "left_elbow_joint": (14.251, 0.907, 25), "right_wrist_roll_joint": (14.251, 0.907, 25),
        "left_wrist_yaw_joint": (16.778, 1.068, 5), "right_wrist_pitch_joint": (16.778, 1.068, 5),
    }
    for name, (kp, kv, limit) in expect.items():
        a = m.actuator(name)
        assert a.gainprm[0] == pytest.approx(kp)
        assert a.biasprm[1] == pytest.approx(-kp) and a.biasprm[2] == pytest.approx(-kv)
        assert tuple(a.forcerange) == pytest.approx((-limit, limit)) and a.forcelimited


def test_keyframe(g1_model):
    key = g1_model.key(g1.KEYFRAME)
    q = key.qpos
    assert q[2] == pytest.approx(0.754)
    assert np.allclose(q[3:7], [1, 0, 0, 0])
    assert np.allclose(q[7:13], [-0.312, 0, 0, 0.669, -0.363, 0])
    assert np.allclose(q[13:19], q[7:13])
    assert np.allclose(q[19:22], 0)
    assert np.allclose(q[22:29], [0.2, 0.2, 0, 0.6, 0, 0, 0])
    assert np.allclose(q[29:36], [0.2, -0.2, 0, 0.6, 0, 0, 0])
    assert np.allclose(key.ctrl, q[7:])


def test_standing_contacts_and_rest_exclusions(g1_model):
    st = g1.standing_contacts(g1_model)
    # both soles flat: 4 spheres + 7 capsules (2 contacts each) per foot
    assert st["ncon_at_keyframe"] == 36
    assert st["ncon"] == 36
    assert st["ncon_self_max"] == 0  # the pairs touching at rest are excluded
    assert g1_model.nexclude >= 2


def test_self_collision_is_on(g1_model):
    """Two limbs that do not touch at rest still collide (e.g. a hand pushed into the torso)."""
    m = g1_model
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, 0)
    mujoco.mj_forward(m, d)
    hand, torso = m.geom("left_hand_collision").id, m.geom("torso_collision").id
    assert m.geom_contype[hand] & m.geom_conaffinity[torso]
    body_pair = {m.geom_bodyid[hand], m.geom_bodyid[torso]}
    for i in range(m.nexclude):
        sig = int(m.exclude_signature[i])
        assert {sig >> 16, sig & 0xFFFF} != body_pair


def test_mjb_round_trip(g1_model, tmp_path):
    path = tmp_path / "g1.mjb"
    sha = g1.save_model(g1_model, path)
    assert sha == g1.sha256_file(path) == g1.model_bytes_sha256(g1_model)
    loaded = g1.load_model(path)
    assert g1.model_bytes_sha256(loaded) == sha
    # and the same physics, bit for bit
    rng = np.random.default_rng(0)
    ctrl = rng.uniform(-0.5, 0.5, (30, loaded.nu))
    traj = []
    for m in (g1_model, loaded):
        d = mujoco.MjData(m)
        mujoco.mj_resetDataKeyframe(m, d, 0)
        for u in ctrl:
            d.ctrl[:] = m.key_ctrl[0] + u
            mujoco.mj_step(m, d, nstep=3)
        traj.append(d.qpos.copy())
    assert np.array_equal(traj[0], traj[1])


def test_build_is_deterministic(g1_model):
    assert g1.model_bytes_sha256(g1.build_g1_model()) == g1.model_bytes_sha256(g1_model)


def test_load_model_none_builds(g1_model):
    assert g1.model_bytes_sha256(g1.load_model(None)) == g1.model_bytes_sha256(g1_model)


def test_model_summary(g1_model):
    s = g1.model_summary(g1_model)
    json.dumps(s)  # serialisable for model.json
    assert (s["nq"], s["nv"], s["nu"], s["ngeom_colliding"]) == (36, 35, 29, 42)
    assert s["opt"]["integrator"] == "mjINT_IMPLICITFAST" and s["opt"]["cone"] == "mjCONE_PYRAMIDAL"
    assert s["standing"]["ncon"] == 36

