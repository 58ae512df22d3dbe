import json
from argparse import ArgumentParser

import pytest

from sacscale.commands import env_bench, prepare_model
from sacscale.sim.bench import full_step_throughput, physics_throughput, run_env_bench
from sacscale.task import g1_model as g1


def test_physics_throughput_standing(g1_model):
    r = physics_throughput(g1_model, 4, 1, steps=10, warmup=1, reset_every=5)
    assert r["env_steps_per_s"] > 0
    assert r["mean_contacts"] > 20  # measured near standing, not on fallen robots


def test_full_step_throughput(g1_model):
    r = full_step_throughput(g1_model, 4, 1, steps=12, warmup=1)
    assert r["env_steps_per_s"] > 0 and 0 < r["physics_seconds"] < r["seconds"]
    assert 0 < r["task_overhead_frac"] < 1


def test_full_step_both_pipelines(g1_model):
    # how much the halves gain is a benchmark figure (env-bench), not a test
    for pipeline in ("serial", "halves"):
        r = full_step_throughput(g1_model, 8, 1, steps=6, warmup=1, pipeline=pipeline)
        assert r["env_steps_per_s"] > 0 and 0 < r["physics_seconds"] < r["seconds"]
        assert r["sim_errors"] == 0


def test_full_step_zero_actions_and_bad_choice(g1_model):
    r = full_step_throughput(g1_model, 4, 1, steps=3, warmup=1, actions="zero")
    assert r["env_steps_per_s"] > 0 and r["sim_errors"] == 0
    with pytest.raises(ValueError, match="actions must be one of"):
        full_step_throughput(g1_model, 4, 1, steps=3, warmup=1, actions="walk")
    assert run_env_bench(g1_model, 4, [1], steps=2, warmup=1, actions="zero")["full_actions"] == "zero"


def test_run_env_bench_rows(g1_model):
    res = run_env_bench(g1_model, 4, [1, 2], steps=4, warmup=1)
    assert [r["threads"] for r in res["results"]] == [1, 2] and res["full_actions"] == "random"
    for r in res["results"]:
        assert r["ratio_full_over_physics"] == pytest.approx(r["full_env_steps_per_s"] / r["physics_env_steps_per_s"])
        assert r["halves_over_full_physics"] == pytest.approx(
            r["halves_env_steps_per_s"] / r["full_physics_env_steps_per_s"])
        assert r["halves_over_serial"] == pytest.approx(r["halves_env_steps_per_s"] / r["full_env_steps_per_s"])
        assert r["halves_physics_env_steps_per_s"] > 0 and r["halves_sim_errors"] == 0
    json.dumps(res)


def _args(module, argv):
    p = ArgumentParser()
    module.add_arguments(p)
    return p.parse_args(argv)


def test_prepare_model_then_env_bench_cli(tmp_path, capsys):
    out = tmp_path / "model"
    assert prepare_model.run(_args(prepare_model, ["--output-dir", str(out), "--num-envs", "4", "--steps", "3"])) == 0
    meta = json.loads((out / "model.json").read_text())
    mjb = out / prepare_model.MODEL_FILE
    assert meta["sha256"] == g1.sha256_file(mjb)
    assert meta["summary"]["ngeom_colliding"] == 42 and meta["physics_cost"]["env_steps_per_s"] > 0

    result = tmp_path / "bench.json"
    argv = ["--num-envs", "4", "--threads", "1", "--steps", "3", "--warmup", "1", "--model", str(mjb),
            "--output", str(result), "--no-progress"]
    assert env_bench.run(_args(env_bench, argv)) == 0
    bench = json.loads(result.read_text())
    assert bench["model_sha256"] == meta["sha256"]  # the .mjb is the model that was measured
    assert "physics/s" in capsys.readouterr().out


def test_env_bench_rejects_bad_cpu_ids(capsys):
    assert env_bench.run(_args(env_bench, ["--cpu-ids", "0,99999", "--no-progress"])) == 2
    assert "99999" in capsys.readouterr().err


def test_env_bench_rejects_too_few_envs(capsys):
    assert env_bench.run(_args(env_bench, ["--num-envs", "1", "--no-progress"])) == 2
    assert "--num-envs must be at least 2" in capsys.readouterr().err
