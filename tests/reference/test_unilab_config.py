"""Our overrides against the installed reference's own Hydra configuration: every key we
set exists and takes our value, and an unknown key (an upstream rename) fails clearly."""

import subprocess

import pytest

from sacscale.task import g1_model as g1
from sacscale.trainers.unilab import UnilabError, UnilabRun, compose_config, hydra_overrides, make_scene, package_info


def test_our_overrides_compose_into_the_references_config(reference_python, tmp_path):
    run = UnilabRun(devices=[0], num_envs=2048, iterations=1000, seed=4, log_root=str(tmp_path / "logs"),
                    cpu_pools=[list(range(1, 16))])
    cfg = compose_config(reference_python, hydra_overrides(run))
    assert cfg["algo"]["num_envs"] == 2048 and cfg["algo"]["max_iterations"] == 1000 and cfg["algo"]["seed"] == 4
    assert cfg["training"]["log_root"] == str(tmp_path / "logs") and cfg["training"]["logger"] == "tensorboard"
    assert cfg["training"]["no_play"] is True and cfg["env"]["cpu_ids"] == list(range(1, 16))
    assert cfg["algo"]["updates_per_step"] == 8  # the task's own SAC settings came with it
    two = UnilabRun(devices=[0, 1], num_envs=2048, iterations=10, seed=1, log_root="x", cpu_pools=[[1, 2], [3, 4]])
    assert (compose_config(reference_python, hydra_overrides(two))["training"]["dp_collector_cpu_ids"]
            == [[1, 2], [3, 4]])


@pytest.mark.parametrize("bad", ["algo.not_a_key=3", "training.devices=[0,1]"])
def test_an_unknown_key_fails_naming_it(reference_python, bad):
    with pytest.raises(UnilabError, match=f"Could not override '{bad.split('=')[0]}'"):
        compose_config(reference_python, hydra_overrides(UnilabRun([0], 16, 1, 0, "x")) + [bad])


def test_the_asset_package_has_every_mesh_the_references_scene_needs(reference_python, tmp_path):
    info = package_info(reference_python)
    assert info["packages"]["unilab"] == "1.5.2"
    scene = make_scene(info["assets_root"], g1.asset_dir() / "assets", tmp_path / "scene")
    assert scene.is_file() and any((scene.parent / "assets").iterdir())
    # the reference's MuJoCo loads it: the meshes are the ones its model names
    loaded = subprocess.run([reference_python, "-c",
                             f"import mujoco; m = mujoco.MjModel.from_xml_path({str(scene)!r}); "
                             "print(m.nmesh, m.nu)"], capture_output=True, text=True, timeout=300)
    assert loaded.returncode == 0, loaded.stderr[-500:]
    nmesh, nu = map(int, loaded.stdout.split())
    assert nmesh > 0 and nu == 29


def test_train_reference_refuses_a_bad_override_before_running_anything(reference_python, tmp_path, capsys):
    from sacscale.cli import main

    run = tmp_path / "ref_run"
    code = main(["train-reference", "--devices", "0", "--log-dir", str(run), "--reference-python", reference_python,
                 "--override", "algo.batch_sizes=4096"])
    assert code == 1
    assert "Could not override 'algo.batch_sizes'" in capsys.readouterr().err
    assert not run.exists()  # nothing written, nothing started



def test_the_pipelines_reference_runs_compose_with_the_keys_the_plan_sets(reference_python, tmp_path):
    """A planned `trainer: unilab` run: the Hydra overrides its `sacscale train-reference`
    command carries (the batch, the run configuration's overrides) are the reference's keys."""
    from pathlib import Path

    import yaml

    from sacscale.pipeline.runplan import Host, resolve, train_command

    presets = yaml.safe_load((Path(__file__).resolve().parents[2] / "workflow" / "presets.yaml").read_text())
    config = {"preset": "h200x1", "order": ["ref_n1"], "pairs": [],
              "run_configs": {"ref_n1": {"trainer": "unilab", "devices": "0", "cpu_pools": ["1-15"], "trace": False,
                                         "overrides": {"algo.updates_per_step": 4}}}}
    plan = resolve(config, presets, Host(cuda_devices=1, cpus=frozenset(range(16))))
    cmd = train_command(plan, plan.runs[0], str(tmp_path / "run"), None)
    extra = [cmd[i + 1] for i, a in enumerate(cmd) if a == "--override"]
    run = UnilabRun(devices=[0], num_envs=2048, iterations=plan.iterations, seed=plan.runs[0].seed,
                    log_root=str(tmp_path / "logs"), cpu_pools=[list(range(1, 16))], extra=extra)
    cfg = compose_config(reference_python, hydra_overrides(run))
    assert cfg["algo"]["batch_size"] == plan.run_configs["ref_n1"].batch_size and cfg["algo"]["updates_per_step"] == 4


def test_our_pythonpath_does_not_reach_the_reference(reference_python, tmp_path, monkeypatch):
    """A PYTHONPATH naming our packages (a stand-in `mujoco` here) would load them into the
    reference, which pins MuJoCo 3.11: its interpreter runs without it."""
    fake = tmp_path / "ours"
    (fake / "mujoco").mkdir(parents=True)
    (fake / "mujoco" / "__init__.py").write_text("__version__ = 'ours, not the reference'\n")
    monkeypatch.setenv("PYTHONPATH", str(fake))
    info = package_info(reference_python)
    assert info["packages"]["mujoco"].startswith("3.11")
    from sacscale.trainers.unilab import isolated_environ

    seen = subprocess.run([reference_python, "-c", "import mujoco; print(mujoco.__version__)"], capture_output=True,
                          text=True, timeout=120, env=isolated_environ({"X": "1"}))
    assert seen.stdout.strip().startswith("3.11"), seen.stdout + seen.stderr
    leaked = subprocess.run([reference_python, "-c", "import mujoco; print(mujoco.__version__)"], capture_output=True,
                            text=True, timeout=120)
    assert leaked.stdout.strip() == "ours, not the reference"  # the check above can fail


def test_train_reference_names_a_mesh_folder_that_lacks_the_meshes(reference_python, tmp_path, capsys):
    from sacscale.cli import main

    empty = tmp_path / "no_meshes"
    empty.mkdir()
    run = tmp_path / "ref_run"
    code = main(["train-reference", "--devices", "0", "--log-dir", str(run), "--reference-python", reference_python,
                 "--meshes", str(empty)])
    assert code == 2  # judged before the reference is asked (its names are the pinned reference's)
    err = capsys.readouterr().err
    assert f"--meshes {empty}: lacks 35 of the 35 mesh files the reference's G1 needs" in err
    assert not run.exists()
