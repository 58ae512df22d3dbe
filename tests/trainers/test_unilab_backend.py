"""The reference trainer's backend without the reference: its command and Hydra mapping,
and its events (written here in its layout) read back in our tags."""

import pytest
from torch.utils.tensorboard import SummaryWriter

from sacscale.analysis.events import EventFileError
from sacscale.analysis.metrics import steady_rate
from sacscale.analysis.reference import read_events
from sacscale.trainers import unilab
from sacscale.trainers.unilab import UnilabError, UnilabRun, command, hydra_overrides, make_scene


def _run(**kw):
    base = dict(devices=[0], num_envs=2048, iterations=1000, seed=3, log_root="logs/ref")
    return UnilabRun(**{**base, **kw})


def test_one_rank_maps_onto_its_hydra_keys_and_stays_on_its_pool():
    argv, env = command(_run(cpu_pools=[list(range(1, 16))]), "/ref/bin/python")
    assert argv[:3] == ["taskset", "-c", "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15"]
    assert argv[3:6] == ["/ref/bin/python", "-m", "unilab.scripts.train_sac"]
    assert {"task=g1_walk_flat/mujoco", "algo.num_envs=2048", "algo.max_iterations=1000", "algo.seed=3",
            "training.log_root=logs/ref", "training.logger=tensorboard", "training.no_play=true",
            "+env.cpu_ids=[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]"} <= set(argv)
    assert env["CUDA_VISIBLE_DEVICES"] == "0"  # 1.5.2 counts its ranks from this variable
    assert not any(a.startswith("training.devices") for a in argv)  # no such key in 1.5.2


def test_two_ranks_get_one_pool_each_and_both_devices():
    argv, env = command(_run(devices=[0, 1], cpu_pools=[[1, 2, 3], [17, 18, 19]]), "py")
    assert argv[0] == "py"  # no taskset: each rank pins its own collector
    assert "training.dp_collector_cpu_ids=[[1,2,3],[17,18,19]]" in argv
    assert env["CUDA_VISIBLE_DEVICES"] == "0,1"
    assert not any(a.startswith("+env.cpu_ids") for a in argv)


def test_bad_runs_are_named():
    with pytest.raises(UnilabError, match="refuses to train on CPU"):
        _run(devices=[])
    with pytest.raises(UnilabError, match="2 CPU pools for 1 ranks"):
        _run(cpu_pools=[[1], [2]])
    with pytest.raises(UnilabError, match="iterations must be positive"):
        _run(iterations=0)
    assert hydra_overrides(_run(extra=["algo.batch_size=4096"]))[-1] == "algo.batch_size=4096"


def _write_reference_events(log_root, points, num_envs=2048, start=100.0, seconds_per_it=0.1, phases=None):
    """Events as the reference writes them: one run directory per run, step = cumulative env
    steps. `phases`: further {tag: value per iteration}, e.g. its Perf/*_ms timings."""
    w = SummaryWriter(str(log_root / "G1WalkFlat" / "2026-12-01_10-00-00_mujoco"))
    for it in range(1, points + 1):
        step, wall = it * num_envs, start + it * seconds_per_it
        w.add_scalar("Perf/total_fps", num_envs / seconds_per_it, step, walltime=wall)
        w.add_scalar("Train/mean_episode_length", float(it), step, walltime=wall)
        w.add_scalar("reward/tracking_lin_vel", 0.5, step, walltime=wall)
        for tag, value in (phases or {}).items():
            w.add_scalar(tag, value(it) if callable(value) else value, step, walltime=wall)
    w.close()


def test_its_events_read_back_in_our_tags_and_give_the_same_metric(tmp_path):
    _write_reference_events(tmp_path, 40)
    ours = read_events(tmp_path)
    steps = ours["Perf/total_env_steps"]
    assert [s.step for s in steps] == list(range(1, 41))
    assert [s.value for s in steps] == [2048.0 * i for i in range(1, 41)]
    assert [s.value for s in ours["Episode/length"]] == [float(i) for i in range(1, 41)]
    assert [s.step for s in ours["Episode/length"]] == list(range(1, 41))
    assert "Ref/reward/tracking_lin_vel" in ours
    rate = steady_rate(steps, "ref")
    assert rate["steady_env_steps_per_s"] == pytest.approx(2048 / 0.1, rel=1e-4)


def test_two_reference_runs_in_one_log_root_are_refused(tmp_path):
    _write_reference_events(tmp_path, 3)
    (tmp_path / "G1WalkFlat" / "2026-12-01_11-00-00_mujoco").mkdir()
    with pytest.raises(EventFileError, match="2 runs of the reference trainer"):
        read_events(tmp_path)
    with pytest.raises(EventFileError, match="no <timestamp>_mujoco run directory"):
        read_events(tmp_path / "elsewhere")


def test_the_scene_takes_its_meshes_from_the_given_folder(tmp_path):
    g1 = tmp_path / "ref" / "robots" / "g1"
    g1.mkdir(parents=True)
    (g1 / "g1.xml").write_text('<mujoco><asset><mesh file="pelvis.STL"/><mesh file="torso.STL"/></asset></mujoco>')
    (g1 / "scene_flat.xml").write_text('<mujoco><include file="g1.xml"/></mujoco>')
    meshes = tmp_path / "meshes"
    meshes.mkdir()
    (meshes / "pelvis.STL").write_bytes(b"solid")
    with pytest.raises(UnilabError, match=r"lacks 1 mesh file\(s\).*torso.STL"):
        make_scene(tmp_path / "ref", meshes, tmp_path / "scene")
    (meshes / "torso.STL").write_bytes(b"solid")
    scene = make_scene(tmp_path / "ref", meshes, tmp_path / "scene")
    assert scene.name == "scene_flat.xml" and (scene.parent / "assets" / "torso.STL").read_bytes() == b"solid"


def test_analyze_run_reads_a_reference_run_directory_like_one_of_ours(tmp_path):
    import json

    from sacscale.analysis.metrics import analyze_run

    run = tmp_path / "ref_run"
    _write_reference_events(run / "ref_logs", 40)
    (run / "trainer.json").write_text(json.dumps({"trainer": "unilab"}))
    result = analyze_run(run)
    assert result["steady_env_steps_per_s"] == pytest.approx(2048 / 0.1, rel=1e-4)
    assert result["total_env_steps"] == 40 * 2048 and result["window"]["events"] == 40
    assert result["final_episode_length"] == 40.0
    assert result["ranks"][0]["event_dir"].startswith("ref_logs/G1WalkFlat/")


def test_a_finished_reference_run_stored_compressed_gives_the_same_metrics(tmp_path):
    import json

    from sacscale.analysis.metrics import analyze_run
    from sacscale.trainers.unilab import compress_events, rank0_event_files

    run = tmp_path / "ref_run"
    _write_reference_events(run / "ref_logs", 60, phases={"reward/tracking_ang_vel": lambda it: 0.01 * it})
    (run / "trainer.json").write_text(json.dumps({"trainer": "unilab"}))
    plain = analyze_run(run)
    (plain_file,) = rank0_event_files(run)
    (stored,) = compress_events(run / "ref_logs")
    assert stored.name == plain_file.name + ".gz" and rank0_event_files(run) == [stored]
    assert analyze_run(run) == plain


def _reference_run(tmp_path, phases, ctrl_dt=None):
    import json

    run = tmp_path / "ref_run"
    _write_reference_events(run / "ref_logs", 40, phases=phases)
    (run / "trainer.json").write_text(json.dumps({"trainer": "unilab"}))
    (run / "run.json").write_text(json.dumps({"resolved_config": {"num_envs": 2048, "world_size": 1}}))
    if ctrl_dt is not None:
        folder = next((run / "ref_logs" / "G1WalkFlat").iterdir())
        (folder / "run_config.json").write_text(json.dumps({"config": {"env": {"ctrl_dt": ctrl_dt}}}))
    return run


def test_its_reward_rates_come_onto_our_per_step_scale(tmp_path):
    ours = read_events(_reference_run(tmp_path, {"reward/tracking_ang_vel": 0.75}, ctrl_dt=0.01) / "ref_logs")
    # rate x ctrl_dt; the rate as logged stays under Ref/
    assert [s.value for s in ours["Reward/tracking_lin_vel"]] == pytest.approx([0.005] * 40)
    assert [s.value for s in ours["Reward/tracking_ang_vel"]] == pytest.approx([0.0075] * 40)
    assert {s.value for s in ours["Ref/reward/tracking_lin_vel"]} == {0.5}
    assert [s.step for s in ours["Reward/tracking_lin_vel"]] == list(range(1, 41))


def test_the_physics_share_and_tracking_of_a_reference_run(tmp_path):
    from sacscale.analysis.metrics import analyze_run

    # 0.1 s per iteration of 2048 envs; its backend step 60 ms up to iteration 21, then 40 ms
    # (the window is log points 21..40: it spans those after its first, 21); its learner's own
    # iteration 90 ms; lin-vel rate 0.5 = 0.25 of weight 2.0, x 0.02 (no run_config.json)
    run = _reference_run(tmp_path, {"Perf/collector_env_step_backend_ms": lambda it: 60.0 if it <= 21 else 40.0,
                                    "Perf/iteration_time": 0.09, "Perf/collector_env_step_ms": 95.0})
    m = analyze_run(run)
    assert m["window"]["first_step"] == 21 and m["window"]["last_step"] == 40
    phys = m["physics"]
    assert phys["source"] == "Ref/Perf/collector_env_step_backend_ms"
    assert phys["physics_ms"] == pytest.approx(40.0)
    assert phys["iteration_ms"] == pytest.approx(100.0, rel=1e-4)
    assert phys["trainer_iteration_ms"] == pytest.approx(90.0)
    assert m["physics_share"] == pytest.approx(0.4, rel=1e-4)
    assert m["final_tracking"]["tracking_lin_vel"] == pytest.approx(0.25)
    assert m["final_tracking"]["tracking_ang_vel"] is None  # not logged
    assert m["phase_ms"] == {}  # its timings are not our phases


def test_a_reference_run_without_its_backend_time_has_no_physics_share(tmp_path):
    from sacscale.analysis.metrics import analyze_run

    m = analyze_run(_reference_run(tmp_path, {}))
    assert m["physics_share"] is None and m["physics"] is None


def test_the_backend_defines_no_layout_of_its_own_and_imports_no_evidence():
    """The run directory's layout is analysis.reference's; the backend hands on the same
    objects, and neither reaches the evidence layer above them."""
    import sys

    from sacscale.analysis import reference

    for name in ("EVENT_SUBDIR", "LOG_ROOT_NAME", "TRAINER_RECORD", "event_dir", "is_reference_run", "read_events"):
        assert getattr(unilab, name) is getattr(reference, name)
    source = "".join(open(m.__file__).read() for m in (unilab, reference, sys.modules["sacscale.analysis.metrics"]))
    assert "sacscale.evidence" not in source and "sacscale.trainers" not in open(reference.__file__).read()
