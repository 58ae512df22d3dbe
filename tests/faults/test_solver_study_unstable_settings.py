"""A solver-study setting whose simulations went unstable (MuJoCo found NaN, Inf or huge values
and reset the state) was reported as a speed-up and a deviation as if it had run, with
MuJoCo's only word in MUJOCO_LOG.TXT in the working folder. Now such a setting is recorded as
unstable: its speed-ups are null, its deviations cover only the envs that stayed stable (null
where none did), one line on stderr names it, and MuJoCo writes no log file."""

import json

import mujoco
import pytest

from sacscale.cli import main
from sacscale.sim import solver_settings

STUDY = ["solver-study", "--num-envs", "2", "--steps", "4", "--repeats", "1", "--no-progress"]


@pytest.fixture
def unbounded_perturbation(monkeypatch):
    """The bound refuses 1e300 rad; lifted here to make every simulation unstable for sure."""
    monkeypatch.setattr(solver_settings, "_MAX_PERTURBATION", float("inf"), raising=False)


def test_an_unstable_setting_is_named_and_left_out(tmp_path, monkeypatch, capsys, g1_mjb, unbounded_perturbation):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "study.json"
    code = main([*STUDY, "--model", str(g1_mjb), "--setting", "init_perturbation=1e300", "--output", str(out)])
    captured = capsys.readouterr()
    assert code == 0
    assert captured.err.strip() == (
        "solver-study: setting 'init_perturbation=1e300' went unstable (NaN, Inf or huge values; MuJoCo reset the "
        "state) in 4 of 4 free-running simulations and 0 of 16 replayed steps: its free-running speed-up is left "
        "out (null), no deviation where no env stayed stable")
    assert "every env went unstable: no deviation to give" in captured.out
    assert not (tmp_path / "MUJOCO_LOG.TXT").exists()
    config = mujoco.MjLogConfig.get()  # the process's setting is given back after the study: console only
    assert config.logto_console and not config.logto_file
    row = json.loads(out.read_text())["results"][1]
    assert row["unstable"] is True
    for sc in ("stand", "random"):
        assert row["free_running"][sc]["unstable_envs"] == 2
        assert row["free_running"][sc]["cpu_speedup_vs_reference"] is None
        assert row["deviation"][sc] == {"4": None} and row["fall_timing"][sc] is None


def test_a_stable_setting_keeps_its_numbers(tmp_path, monkeypatch, capsys, g1_mjb):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "study.json"
    code = main([*STUDY, "--model", str(g1_mjb), "--setting", "init_perturbation=1e-9", "--output", str(out)])
    assert code == 0 and capsys.readouterr().err == ""
    row = json.loads(out.read_text())["results"][1]
    assert row["unstable"] is False
    for sc in ("stand", "random"):
        assert row["free_running"][sc]["cpu_speedup_vs_reference"] > 0
        assert row["cost"][sc]["cpu_speedup_vs_reference"] > 0 and row["cost"][sc]["unstable_sim_steps"] == 0
        assert row["deviation"][sc]["4"]["envs_compared"] == 2
