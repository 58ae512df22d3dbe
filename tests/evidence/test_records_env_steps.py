"""A run's envs per rank against the env steps the trainer and its events counted: the
records' num_envs rewritten everywhere the project's own commands write it (plan, the run's
command, resolved config, train_meta.json config), with the metrics, the summary, the
manifest and the page made again, passed verify before these were compared."""

import json

from set_copies import current_copy, made_current

from sacscale.analysis.aggregate import runs_table
from sacscale.analysis.metrics import analyze_run
from sacscale.atomic import write_json
from sacscale.evidence.derived import recompute_summary
from sacscale.evidence.verify import verify

SET = "h200x1_shared_short"
RUNS = ("shared_r1_n2_shared", "shared_r2_n2_shared")


def rewrite_json(path, edit) -> None:
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data, indent=2))


def four_thousand_envs(root) -> None:
    def plan(p):
        p["run_configs"]["n2_shared"]["num_envs"] = 4096
    rewrite_json(root / "plan.json", plan)
    rewrite_json(root / "environment.json", lambda env: plan(env["plan"]))  # the plan verify-env checked
    for name in RUNS:
        def run(r):
            r["command"][r["command"].index("--num-envs") + 1] = "4096"
            r["command_line"] = r["command_line"].replace("--num-envs 2048", "--num-envs 4096")
            r["resolved_config"]["num_envs"] = 4096
        rewrite_json(root / "runs" / name / "run.json", run)
        rewrite_json(root / "runs" / name / "train_meta.json", lambda m: m["config"].update(num_envs=4096))


def remake_metrics_and_summary(root) -> None:
    """What the pipeline's analyze-run and aggregate rules write from the edited records."""
    plan = json.loads((root / "plan.json").read_text())
    metrics = []
    for entry in plan["runs"]:
        metrics.append(analyze_run(root / "runs" / entry["name"]))
        write_json(root / "metrics" / f"{entry['name']}.json", metrics[-1])
    write_json(root / "summary.json", recompute_summary(plan, metrics))
    (root / "summary.csv").write_text(runs_table(metrics).to_csv(index=False))


def test_envs_per_rank_the_events_did_not_count_are_named(tmp_path):
    root = current_copy(tmp_path, SET)
    four_thousand_envs(root)
    remake_metrics_and_summary(root)
    made_current(root)
    result = verify(root)
    assert not (result.metrics or result.derived or result.structure), result.problems()
    records = result.records
    said = "its records say 4096 envs per rank"
    for run in RUNS:
        assert (f"{run}: env steps: train_meta.json rank0_env_steps 614400 is not 300 iterations x 4096 envs "
                f"({said})") in records
        assert (f"{run}: env steps: the events' all-ranks window counts 573440 env steps over 140 iterations, "
                f"not 8192 an iteration ({said}, 2 rank(s))") in records
        for rank in (0, 1):
            assert (f"{run}: env steps: rank {rank}'s events count 614400 after 300 iterations, not 4096 an "
                    f"iteration ({said})") in records
    # nothing else disagrees but the phase times, which the rewrite left filling half of an
    # iteration of twice the envs (sacscale.evidence.phase_bounds names that too)
    assert all(" env steps: " in p or "logs the learner's phases" in p for p in records), records
