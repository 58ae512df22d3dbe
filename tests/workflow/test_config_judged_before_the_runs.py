"""Config values that planned, then failed or misled once the set ran: a free-disk
requirement no disk meets (the trainer refused it after the environment check, the model and
the probe), a learning start past the rows a run collects (its learner never updated, and the
set verified and reported collection alone), and a model.from_mjb that MuJoCo cannot load
(refused by prepare-model only). Each is refused at planning, one line naming the key."""

import shutil
from pathlib import Path

import pytest
import yaml

from sacscale.pipeline.runplan import Host, PlanError, resolve

ROOT = Path(__file__).resolve().parents[2]
PRESETS = yaml.safe_load((ROOT / "workflow" / "presets.yaml").read_text())
CPU_BOX = Host(cuda_devices=0, cpus=frozenset(range(2)))
MODEL = ROOT / "results" / "h200x1_final5" / "model" / "g1_walk_flat.mjb"  # a committed task model, read only


def plan(**config):
    return resolve({"preset": "cpu", **config}, PRESETS, CPU_BOX)


def one_run(overrides: dict, **config):
    """The cpu preset's one-rank configuration alone, with `overrides`."""
    return plan(order=["n1_cpu"], run_configs={"n1_cpu": {"overrides": overrides}}, **config)


def test_a_free_disk_requirement_past_any_disk_is_refused():
    with pytest.raises(PlanError) as err:
        one_run({"min-free-mb": 1000000000000})
    assert str(err.value).startswith("run_configs.n1_cpu.overrides.min-free-mb: --min-free-mb must be in "
                                     "[0, 1073741824] (MB of free disk, at most 1 PiB), got 1e+12")


def test_a_free_disk_requirement_past_this_disk_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    total_mb = shutil.disk_usage(tmp_path).total / 2**20
    if total_mb + 1024 > 2**30:
        pytest.skip("a disk of more than 1 PiB: the option's own bound comes first")
    with pytest.raises(PlanError, match=r"^run_configs\.n1_cpu\.overrides\.min_free_mb: \d+ MB of free disk asked "
                                        r"of each run, more than the disk its run folder results/cpu/runs/"
                                        r"\.cpu_r1_n1_cpu\.partial lies on holds in all \(.* MB, at .*\): no run "
                                        "could start$"):
        one_run({"min_free_mb": int(total_mb) + 1024})
    one_run({"min_free_mb": 64})


def test_a_learning_start_past_the_rows_a_run_collects_is_refused():
    """6 iterations of 16 envs a rank collect 96 rows: a learner starting at 1000 never updates."""
    with pytest.raises(PlanError) as err:
        one_run({"extra": '{"learning_starts": 1000}'}, iterations=6, repeats=1)
    assert str(err.value) == ("run_configs.n1_cpu.overrides.extra: learning_starts 1000 is more rows than a rank's "
                              "replay collects in a run (iterations 6 x num_envs 16 = 96): the learner would never "
                              "update; give at most 96, or more iterations")


def test_a_learning_start_within_the_rows_a_run_collects_passes():
    one_run({"extra": '{"learning_starts": 384}'})  # 24 iterations x 16 envs: it updates in the last


def test_a_left_out_configurations_learning_start_is_judged_too():
    with pytest.raises(PlanError, match=r"^run_configs\.spare\.overrides\.extra: learning_starts 385 is more rows"):
        plan(run_configs={"spare": {"devices": "cpu", "cpu_pools": "auto", "description": "d",
                                    "overrides": {"extra": '{"learning_starts": 385}'}}})


def test_iterations_that_end_before_the_default_learning_start_are_refused():
    """The default start, max(batch 128, 10 x 16 envs) = 160 rows, comes at iteration 10."""
    with pytest.raises(PlanError) as err:
        plan(iterations=9)
    assert str(err.value) == ("iterations: 9: run_configs.n1_cpu's learner first updates at iteration 10 (once a "
                              "rank's replay holds max(batch_size 128, 10 x num_envs 16) = 160 rows, 16 an "
                              "iteration): its runs would end before it ever updates; give at least 10 iterations")
    plan(iterations=10)


@pytest.mark.parametrize("content, says", [
    (MODEL.read_bytes()[:40000], "Truncated model file"),
    ((ROOT / "README.md").read_bytes(), "Model missing header ID"),  # not a model at all
    (b"", "failed to load from mjb"),
])
def test_a_model_file_mujoco_cannot_load_is_refused(tmp_path, content, says):
    model = tmp_path / "g1.mjb"
    model.write_bytes(content)
    with pytest.raises(PlanError) as err:
        plan(model={"from_mjb": str(model)})
    assert str(err.value).startswith(f"model.from_mjb: {model}: not a loadable compiled MuJoCo model (.mjb; "
                                     "truncated or another format?): ")
    assert says in str(err.value) and "\n" not in str(err.value)


def test_a_whole_model_file_passes(tmp_path):
    model = tmp_path / "g1.mjb"
    model.write_bytes(MODEL.read_bytes())
    assert plan(model={"from_mjb": str(model)}).model["from_mjb"] == str(model)


def test_a_model_in_the_home_folder_is_found_by_its_tilde_path(tmp_path, monkeypatch):
    """`~/g1.mjb` was said not to exist (run env values do take ~ paths)."""
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "g1.mjb").write_bytes(MODEL.read_bytes())
    assert plan(model={"from_mjb": "~/g1.mjb"}).model["from_mjb"] == str(tmp_path / "g1.mjb")


@pytest.mark.parametrize("starts, says", [
    (1000, "learning_starts 1000 is more rows than a rank's replay collects"),  # this plan's runs: never reached
    (100000, "learning starts at 100000 rows (--extra learning_starts) but the replay holds")])  # the replay's bound
def test_a_learning_start_set_in_run_defaults_is_named_there(starts, says):
    """Set under the user's run_defaults, the value was credited to run_configs.n1_cpu (preset
    cpu), a key the user never wrote; an entry's own override is still its own."""
    extra = {"overrides": {"extra": f'{{"learning_starts": {starts}}}'}}
    with pytest.raises(PlanError) as err:
        plan(order=["n1_cpu"], run_defaults=extra, iterations=6, repeats=1)
    assert str(err.value).startswith(f"run_defaults.overrides.extra: {says}"), err.value
    with pytest.raises(PlanError) as err:
        plan(order=["n1_cpu"], run_defaults=extra, run_configs={"n1_cpu": extra}, iterations=6, repeats=1)
    assert str(err.value).startswith(f"run_configs.n1_cpu.overrides.extra: {says}"), err.value


def test_a_loadable_model_of_another_body_is_refused_as_prepare_model_refuses_it(tmp_path):
    """A valid compiled model of a free ball planned, and prepare-model refused it after the
    environment check: MuJoCo's load alone was judged."""
    from sacscale.mujoco_lib import mujoco

    ball = mujoco.MjModel.from_xml_string("<mujoco><worldbody><body><freejoint/><geom size='0.1'/></body>"
                                          "</worldbody></mujoco>")
    model = tmp_path / "ball.mjb"
    mujoco.mj_saveModel(ball, str(model), None)
    with pytest.raises(PlanError) as err:
        plan(model={"from_mjb": str(model)})
    assert str(err.value) == (f"model.from_mjb: {model}: loads, but is not the G1 walking task's model: ValueError: "
                              "not the G1 task model: nq=7 nv=6 nu=0")
