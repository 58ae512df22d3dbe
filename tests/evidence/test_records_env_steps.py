"""A run's envs per rank against the env steps the trainer and its events counted: the
records' num_envs rewritten everywhere the project's own commands write it (plan, the run's
command, resolved config, train_meta.json config), with the manifest and the page made again,
passed verify before these were compared."""

import json

from set_copies import copy_committed_set, made_current

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
    text = (root / "environment.json").read_text()
    (root / "environment.json").write_text(text.replace('"num_envs": 2048', '"num_envs": 4096'))
    for name in RUNS:
        def run(r):
            r["command"][r["command"].index("--num-envs") + 1] = "4096"
            r["command_line"] = r["command_line"].replace("--num-envs 2048", "--num-envs 4096")
            r["resolved_config"]["num_envs"] = 4096
        rewrite_json(root / "runs" / name / "run.json", run)
        rewrite_json(root / "runs" / name / "train_meta.json", lambda m: m["config"].update(num_envs=4096))


def test_envs_per_rank_the_events_did_not_count_are_named(tmp_path):
    root = made_current(copy_committed_set(tmp_path, SET))
    four_thousand_envs(root)
    made_current(root)
    records = verify(root).records
    said = "its records say 4096 envs per rank"
    assert (f"shared_r1_n2_shared: env steps: train_meta.json rank0_env_steps 614400 is not 300 iterations x "
            f"4096 envs ({said})") in records
    assert (f"shared_r1_n2_shared: env steps: rank 0's events count 614400 after 300 iterations, not 4096 an "
            f"iteration ({said})") in records
    assert (f"shared_r2_n2_shared: env steps: the events' all-ranks window counts 573440 env steps over 140 "
            f"iterations, not 8192 an iteration ({said}, 2 rank(s))") in records \
        or any(p.startswith("shared_r2_n2_shared: env steps: the events' all-ranks window") for p in records)
    assert not any(p.startswith("shared_r1_n1_pool7: env steps") for p in records)
