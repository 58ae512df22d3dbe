"""key=value options: solver-study's --setting took `tolerance=1e400` and `init_perturbation=inf`
(recorded as null; a solver of 0 iterations reported as a 3.6x speed-up) and a key given twice
(the later one taken unseen), and finite values past what the study means (init_perturbation
1e300 rad, which MuJoCo reset as unstable); its --checkpoints moved a step past the rollout to the last one
and answered `nan` in Python's words. Each is now one line naming the option, exit 2, before
any model is read; the other key=value options (train-reference's --override, record-run's
--env) refuse a key given twice, and a non-finite override, the same way; an override's
interpolation (`${oc.decode:inf}`), Hydra cast (`float(inf)`) or quoted number ('1e400')
passed the finite check and is now refused as well."""

import sys

import pytest

from sacscale.cli import main
from sacscale.pipeline.overrides import check_reference_override
from sacscale.pipeline.plan_values import PlanError
from sacscale.sim import solver_settings

COUNTS = ("iterations must be in [1, 1000] and ls_iterations in [1, 100] (10x and 2x MuJoCo's 100 and 50: a step "
          "past them runs for minutes inside MuJoCo, where a stop cannot reach it)")
STUDY = ["solver-study", "--num-envs", "2", "--steps", "4", "--no-progress", "--model", "/nonexistent.mjb"]


@pytest.mark.parametrize("setting, says", [
    ("tolerance=1e400", "bad value '1e400' for tolerance in 'tolerance=1e400': not a finite number"),
    ("init_perturbation=inf", "bad value 'inf' for init_perturbation in 'init_perturbation=inf': not a finite number"),
    ("tolerance=nan", "bad value 'nan' for tolerance in 'tolerance=nan': not a finite number"),
    ("init_perturbation=-inf", "bad value '-inf' for init_perturbation in 'init_perturbation=-inf': not a finite "
                               "number"),
    ("iterations=5,iterations=6", "solver setting iterations is given twice in 'iterations=5,iterations=6'"),
    ("iterations=3000000000", f"'iterations=3000000000': {COUNTS}"),
    # with tolerance 0 every iteration runs inside MuJoCo's C code, where a stop signal is not acted on:
    # 2**31-1 of each ran for hours, deaf to SIGTERM
    ("iterations=2147483647,ls_iterations=2147483647,tolerance=0",
     f"'iterations=2147483647,ls_iterations=2147483647,tolerance=0': {COUNTS}"),
    ("iterations=1001", f"'iterations=1001': {COUNTS}"),
    ("ls_iterations=101", f"'ls_iterations=101': {COUNTS}"),
    ("iterations=0", f"'iterations=0': {COUNTS}"),
    ("tolerance=-1", "'tolerance=-1': tolerance must be >= 0"),
    # finite but past what the study means: 1e300 rad made MuJoCo reset every simulation
    ("init_perturbation=1e300", "'init_perturbation=1e300': init_perturbation 1e+300 rad is past +-0.1 rad: it is "
                                "a yardstick of tiny joint offsets (the sweep's is 1e-9)"),
    ("init_perturbation=-0.2", "'init_perturbation=-0.2': init_perturbation -0.2 rad is past +-0.1 rad: it is a "
                               "yardstick of tiny joint offsets (the sweep's is 1e-9)"),
    ("tolerance=2", "'tolerance=2': tolerance 2 is past 1, a solver precision of none; for a solver that stops "
                    "early give iterations=1"),
])
def test_solver_study_refuses_the_setting(capsys, setting, says):
    assert main([*STUDY, "--setting", setting]) == 2
    assert capsys.readouterr().err.strip() == f"solver-study: {says}"


@pytest.mark.parametrize("spec", ["init_perturbation=0.1", "init_perturbation=-1e-9", "tolerance=1", "tolerance=0",
                                  "iterations=1000,ls_iterations=100,tolerance=0", "iterations=1,ls_iterations=1"])
def test_solver_study_takes_the_settings_within_the_bounds(spec):
    assert solver_settings.parse_setting(spec).name == spec


@pytest.mark.parametrize("checkpoints, says", [
    ("9", "--checkpoints '9': step 9 is past the rollout (--steps 4)"),
    ("2,2", "--checkpoints '2,2': a step is given twice"),
    ("nan", "--checkpoints 'nan': positive control-step counts, e.g. 10,50,100"),
    ("0", "--checkpoints '0': positive control-step counts, e.g. 10,50,100"),
])
def test_solver_study_refuses_the_checkpoints(capsys, checkpoints, says):
    assert main([*STUDY, "--checkpoints", checkpoints]) == 2
    assert capsys.readouterr().err.strip() == f"solver-study: {says}"


@pytest.mark.parametrize("overrides, says", [
    (["algo.gamma=0.9", "algo.gamma=0.8"], "--override 'algo.gamma=0.8': algo.gamma is given twice"),
    (["algo.gamma=0.9", "+algo.gamma=0.8"], "--override '+algo.gamma=0.8': algo.gamma is given twice"),
    (["algo.gamma=1e400"], "--override 'algo.gamma=1e400': '1e400' is not a finite number"),
    (["algo.tau=nan"], "--override 'algo.tau=nan': 'nan' is not a finite number"),
    # the reference's config language makes any value of an interpolation, a cast or a quoted word
    (["algo.gamma=${oc.decode:inf}"], "--override 'algo.gamma=${oc.decode:inf}': '${oc.decode:inf}' is an "
                                      "interpolation (${...}): the reference's config resolves it when it runs, "
                                      "into any value, past this check; give the value itself"),
    (["algo.gamma=0.9${x}"], "--override 'algo.gamma=0.9${x}': '0.9${x}' is an interpolation (${...}): the "
                             "reference's config resolves it when it runs, into any value, past this check; give "
                             "the value itself"),
    (["algo.gamma=float(inf)"], "--override 'algo.gamma=float(inf)': 'float(inf)' is not a finite number"),
    (["algo.gamma='1e400'"], "--override \"algo.gamma='1e400'\": \"'1e400'\" is not a finite number"),
])
def test_train_reference_refuses_the_override(tmp_path, capsys, overrides, says):
    words = [w for o in overrides for w in ("--override", o)]
    argv = ["train-reference", "--reference-python", sys.executable, "--log-dir", str(tmp_path / "run"), *words]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == f"sacscale train-reference: error: {says}"
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("value", ["0.97", "float(0.97)", "'abc'", "[1,2]", "[256, 256]", "{a: 1, b: [2, 3]}",
                                   "choice(0.9, 0.99)", "'a,b:c'", "[a, b]", "interval(0, 1)", "-1e-3"])
def test_a_plain_reference_override_passes(value):
    check_reference_override("algo.gamma", value, "here")


# Hydra's lists, dicts, functions and sweeps hold numbers inside: an inf there reached the run
@pytest.mark.parametrize("value", ["[inf]", "{a: nan}", "float([1, inf])", "choice(inf, 0.9)", "[1, [2, nan]]",
                                   "{a: {b: '1e400'}}", "range(0, inf)", "choice(x=inf)", "0.9,inf", "[1e999]"])
def test_a_non_finite_number_inside_a_reference_override_is_refused(value):
    with pytest.raises(PlanError) as exc:
        check_reference_override("algo.gamma", value, "run_configs.u1.overrides.algo.gamma")
    assert str(exc.value) == f"run_configs.u1.overrides.algo.gamma: {value!r} is not a finite number"


def test_train_reference_refuses_an_inf_in_a_list_override(tmp_path, capsys):
    argv = ["train-reference", "--reference-python", sys.executable, "--log-dir", str(tmp_path / "run"),
            "--override", "algo.hidden=[256, inf]"]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == ("sacscale train-reference: error: --override 'algo.hidden=[256, inf]': "
                                               "'[256, inf]' is not a finite number")
    assert not (tmp_path / "run").exists()


def test_a_run_configs_interpolated_override_is_refused_at_planning():
    with pytest.raises(PlanError) as exc:
        check_reference_override("algo.gamma", "${oc.env:GAMMA}", "run_configs.u1.overrides.algo.gamma")
    assert str(exc.value).startswith("run_configs.u1.overrides.algo.gamma: '${oc.env:GAMMA}' is an interpolation")


def test_record_run_refuses_an_env_key_twice(tmp_path, capsys):
    code = main(["record-run", "--run-dir", str(tmp_path / "r"), "--work-dir", str(tmp_path / "w"), "--attic",
                 str(tmp_path / "a"), "--timeout", "10", "--env", "A=1", "--env", "A=2", "--", "true"])
    assert code == 2
    assert capsys.readouterr().err.strip() == "sacscale record-run: error: --env 'A=2': A is given twice"
    assert not (tmp_path / "r").exists() and not (tmp_path / "w").exists()
