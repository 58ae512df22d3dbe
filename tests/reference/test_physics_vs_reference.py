"""One control step (3 substeps) of our model in our MuJoCo (4.x) against the reference's
model in its MuJoCo (3.11), from the same states.

States: the standing keyframe and random perturbations of it that touch the floor with the
feet (joints +-0.3 rad, pelvis height 0.70-0.78 m, tilt up to ~0.15 rad, any yaw, base
velocity +-0.5, joint velocity +-2 rad/s, targets +-1 rad around the keyframe's), so that
the foot contacts, their friction classes and the solver all take part. Contact sets must
be equal; forces and the next state agree to the tolerances below."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from sacscale.task import g1_model as g1
from unilab_model_worker import step_states  # the reference side's own measurement, on our model

N_STATES = 48


def _states(model, n, seed=0):
    rng = np.random.default_rng(seed)
    key = model.key(g1.KEYFRAME)
    qpos = np.tile(key.qpos, (n, 1))
    qvel = np.zeros((n, model.nv))
    ctrl = np.tile(key.ctrl, (n, 1))
    for i in range(1, n):  # state 0: the keyframe itself
        qpos[i, 2] = rng.uniform(0.70, 0.78)
        roll, pitch, yaw = rng.uniform(-0.15, 0.15), rng.uniform(-0.15, 0.15), rng.uniform(-np.pi, np.pi)
        quat = np.zeros(4)
        mujoco.mju_euler2Quat(quat, np.array([roll, pitch, yaw]), "xyz")
        qpos[i, 3:7] = quat
        qpos[i, 7:] += rng.uniform(-0.3, 0.3, model.nu)
        qvel[i, :6] = rng.uniform(-0.5, 0.5, 6)
        qvel[i, 6:] = rng.uniform(-2.0, 2.0, model.nu)
        ctrl[i] += rng.uniform(-1.0, 1.0, model.nu)
    return qpos, qvel, ctrl


@pytest.fixture(scope="module")
def both(run_reference, ours):
    qpos, qvel, ctrl = _states(ours, N_STATES)
    theirs = run_reference("unilab_model_worker.py", "physics", qpos=qpos, qvel=qvel, ctrl=ctrl,
                           nstep=np.array(g1.N_SUBSTEPS))
    return step_states(ours, qpos, qvel, ctrl, g1.N_SUBSTEPS), theirs


def test_the_states_exercise_the_contacts(both):
    mine, _ = both
    assert mine["ncon0"][0] == 36  # standing: 36 contacts, as the task spec says
    assert (mine["ncon0"] > 0).mean() > 0.5 and mine["ncon0"].max() >= 20


def test_same_contacts_and_normal_forces(both):
    mine, theirs = both
    np.testing.assert_array_equal(mine["ncon0"], theirs["ncon0"])
    np.testing.assert_array_equal(mine["ncon"], theirs["ncon"])
    # total normal force at the given state: the same constraint problem solved by two
    # MuJoCo versions to the same tolerance (1e-8)
    # (measured: at most 4e-10 N apart on totals of up to ~1 kN)
    np.testing.assert_allclose(mine["normal_force0"], theirs["normal_force0"], rtol=1e-9, atol=1e-8)


def test_same_next_state(both):
    mine, theirs = both
    # Both versions integrate the same equations; what remains is floating-point order and
    # solver convergence (Newton to tolerance 1e-8 per substep). Measured on these states
    # (MuJoCo 4.0.0 vs 3.11.0): at most 1e-14 apart in qpos, 1e-12 in qvel, 3e-12 in the
    # sensors. The bounds below leave two to three orders of magnitude for other CPUs and
    # BLAS-free summation orders, and are still far below anything the task observes
    # (joint-angle noise 0.01 rad, joint-velocity noise 0.1 rad/s).
    np.testing.assert_allclose(mine["qpos"], theirs["qpos"], atol=1e-11)
    np.testing.assert_allclose(mine["qvel"], theirs["qvel"], atol=1e-9)
    np.testing.assert_allclose(mine["sensordata"], theirs["sensordata"], atol=1e-9)
