import copy
import json
import math
import os
from argparse import ArgumentParser

import numpy as np
import pytest
from mujoco.batch import Batch

from sacscale.commands import solver_study as cmd
from sacscale.sim import solver_settings
from sacscale.sim import solver_study as ss
from sacscale.task import g1_model as g1

N, STEPS, CKPTS = 4, 6, (3, 6)


@pytest.fixture(scope="module")
def study(g1_model, tmp_path_factory):
    Setting = solver_settings.SolverSetting
    settings = [solver_settings.REFERENCE, Setting("default again"), Setting("iterations=1", iterations=1)]
    # an unstable simulation makes MuJoCo append to MUJOCO_LOG.TXT in the working directory
    cwd = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("mujoco_log"))
    try:
        return ss.run_solver_study(
            g1_model, settings, num_envs=N, steps=STEPS, checkpoints=CKPTS, stand_window=3, repeats=2
        )
    finally:
        os.chdir(cwd)


def _rows(study):
    return {r["setting"]["name"]: r for r in study["results"]}


def test_reference_settings_reproduce_the_reference_exactly(study):
    for name in ("default", "default again"):
        row = _rows(study)[name]
        for sc in ss.SCENARIOS:
            assert set(row["deviation"][sc]) == {"3", "6"}
            for d in row["deviation"][sc].values():
                assert d["identical_frac"] == 1.0
                assert d["joint_rms_rad"] == 0.0 and d["pelvis_err_mean_m"] == 0.0 and d["fall_differs_frac"] == 0.0
            assert row["fall_timing"][sc]["fell_in_one_only_frac"] == 0.0


def test_a_loose_solver_changes_the_trajectories(study):
    row = _rows(study)["iterations=1"]
    for sc in ss.SCENARIOS:
        d = row["deviation"][sc]["6"]
        assert d["joint_rms_rad"] > 1e-4 and d["pelvis_err_mean_m"] > 0
        assert d["identical_frac"] < 1.0
        # one Newton iteration per solve, where the reference needs several
        assert row["cost"][sc]["mean_solver_iterations"] == pytest.approx(1.0)
        assert _rows(study)["default"]["cost"][sc]["mean_solver_iterations"] > 1.5


def test_cost_fields_positive_and_finite(study):
    for row in study["results"]:
        for sc in ss.SCENARIOS:
            for part in (row["cost"][sc], row["free_running"][sc]):
                for key in ("env_steps_per_s", "env_steps_per_cpu_s", "cpu_speedup_vs_reference"):
                    assert math.isfinite(part[key]) and part[key] > 0, (row["setting"]["name"], sc, key)
            assert len(row["cost"][sc]["rounds"]) == 2
            assert row["cost"][sc]["mean_contacts"] > 0
    ref = _rows(study)["default"]["cost"]
    assert all(ref[sc]["cpu_speedup_vs_reference"] == 1.0 for sc in ss.SCENARIOS)
    # the standing cost is measured on standing states: both feet on the floor
    assert ref["stand"]["mean_contacts"] > 20


def test_expanded_option_equals_a_model_with_that_option(g1_model):
    """Batch.expand('opt.iterations') really sets the solver's iterations, per simulation."""
    setting = solver_settings.SolverSetting("loose", iterations=2, ls_iterations=3, tolerance=1e-3)
    qpos0, qvel0 = ss.initial_states(g1_model, 3, seed=1)
    controls = ss.control_sequence(g1_model, "random", 3, 4, seed=1)
    via_expand = ss.rollout(g1_model, setting, qpos0, qvel0, controls, 1, [4])["checkpoints"][4]["qpos"]

    m = copy.copy(g1_model)
    m.opt.iterations, m.opt.ls_iterations, m.opt.tolerance = 2, 3, 1e-3
    b = Batch(m, 3, 1)
    b.reset()
    qpos, qvel, ctrl = b.bind("qpos"), b.bind("qvel"), b.bind("ctrl")
    qpos[:], qvel[:] = qpos0, qvel0
    for u in controls:
        ctrl[:] = u
        b.step(nstep=g1.N_SUBSTEPS)
    np.testing.assert_array_equal(via_expand, qpos)
    assert g1_model.opt.iterations == 100  # the study never changes the task model


def test_parse_setting():
    s = solver_settings.parse_setting("iterations=5, ls_iterations=8")
    assert (s.iterations, s.ls_iterations, s.tolerance) == (5, 8, 1e-8)
    assert solver_settings.parse_setting("tolerance=1e-4").tolerance == 1e-4
    for bad in ("iterations", "iteration=5", "iterations=five", "iterations=0"):
        with pytest.raises(ValueError):
            solver_settings.parse_setting(bad)
    assert solver_settings.default_sweep()[0] == solver_settings.REFERENCE


def test_cli_json_schema(tmp_path, capsys):
    p = ArgumentParser()
    cmd.add_arguments(p)
    out = tmp_path / "study.json"
    argv = ["--num-envs", "3", "--steps", "4", "--checkpoints", "2,4", "--setting", "iterations=5,ls_iterations=8",
            "--output", str(out), "--no-progress"]
    assert cmd.run(p.parse_args(argv)) == 0
    res = json.loads(out.read_text())
    for key in ("num_envs", "steps", "threads", "checkpoints", "scenarios", "reference", "model_opt", "model_sha256",
                "processor", "mujoco_version", "results"):
        assert key in res, key
    assert res["checkpoints"] == [2, 4] and res["model_opt"]["iterations"] == 100
    assert [r["setting"]["name"] for r in res["results"]] == ["default", "iterations=5,ls_iterations=8"]
    row = res["results"][1]
    assert row["setting"]["iterations"] == 5 and row["setting"]["ls_iterations"] == 8
    for sc in ("stand", "random"):
        assert {"env_steps_per_s", "env_steps_per_cpu_s", "cpu_speedup_vs_reference", "mean_solver_iterations"} <= set(
            row["cost"][sc]
        )
        assert set(row["deviation"][sc]) == {"2", "4"}
        assert {"joint_rms_rad", "pelvis_err_mean_m", "fall_differs_frac", "identical_frac"} <= set(
            row["deviation"][sc]["4"]
        )
        assert {"fell_in_one_only_frac", "fall_step_mean_abs_diff"} <= set(row["fall_timing"][sc])
    printed = capsys.readouterr().out
    assert "stand/cpu-s" in printed and "iterations=5,ls_iterations=8" in printed


def test_cli_rejects_bad_setting(capsys):
    p = ArgumentParser()
    cmd.add_arguments(p)
    assert cmd.run(p.parse_args(["--setting", "iters=5", "--no-progress"])) == 2
    assert "iters" in capsys.readouterr().err
