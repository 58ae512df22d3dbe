"""Preset resolution, the run list and the semantic checks (each error names its key)."""

import os
import re
from pathlib import Path

import pytest
import yaml

from sacscale.pipeline.runplan import Host, PlanError, resolve, run_environment, train_command

ROOT = Path(__file__).resolve().parents[2]
PRESETS = yaml.safe_load((ROOT / "workflow" / "presets.yaml").read_text())
CPU_BOX = Host(cuda_devices=0, cpus=frozenset(range(2)))
SEED_BOX = Host(cuda_devices=2, cpus=frozenset(range(96)))
H200_1 = Host(cuda_devices=1, cpus=frozenset(range(16)))
H200_2 = Host(cuda_devices=2, cpus=frozenset(range(32)))


def plan(config=None, host=CPU_BOX, **kw):
    return resolve({"preset": "auto", **(config or {})}, PRESETS, host, **kw)


def test_auto_without_cuda_is_the_cpu_preset_and_says_so():
    p = plan()
    assert p.preset == "cpu" and p.run_set == "cpu"
    assert "no CUDA device visible" in p.preset_reason
    assert {rc.device_kind for rc in p.run_configs.values()} == {"cpu"}
    assert [rc.world_size for rc in p.run_configs.values()] == [1, 2]


@pytest.mark.parametrize("host, expected", [(SEED_BOX, "rtx5090x2"), (H200_2, "h200x2"), (H200_1, "h200x1")])
def test_auto_with_cuda_takes_the_first_preset_that_fits(host, expected):
    p = plan(host=host)
    assert p.preset == expected and expected in p.preset_reason


def test_runs_are_counterbalanced_abba_baab_with_paired_seeds():
    p = plan({"repeats": 4, "prefix": "x"})
    assert [r.name for r in p.runs] == [
        "x_r1_n1_cpu", "x_r1_n2_cpu", "x_r2_n2_cpu", "x_r2_n1_cpu",
        "x_r3_n2_cpu", "x_r3_n1_cpu", "x_r4_n1_cpu", "x_r4_n2_cpu",
    ]
    assert "".join("AB"[r.config == "n2_cpu"] for r in p.runs) == "ABBABAAB"
    assert [r.index for r in p.runs] == list(range(8))
    assert p.previous("x_r2_n2_cpu").name == "x_r1_n2_cpu" and p.previous("x_r1_n1_cpu") is None
    assert [r.seed for r in p.runs] == [1, 1, 2, 2, 3, 3, 4, 4]  # both configurations of repeat k: seed k
    recorded = p.as_dict()
    assert recorded["schedule"] == "counterbalanced" and recorded["execution_order"] == [r.name for r in p.runs]


def test_alternating_schedule_is_still_available():
    p = plan({"repeats": 2, "prefix": "x", "schedule": "alternating"})
    assert [r.config for r in p.runs] == ["n1_cpu", "n2_cpu", "n1_cpu", "n2_cpu"]


def test_gpu_presets_default_to_five_repeats_of_1000_iterations():
    for name, host in (("rtx5090x2", SEED_BOX), ("h200x1", H200_1), ("h200x2", H200_2)):
        p = plan({"preset": name}, host=host)
        assert (p.repeats, p.iterations, p.schedule) == (5, 1000, "counterbalanced"), name


def test_named_presets_cover_the_seed_server_and_the_h200_machines():
    seed = plan({"preset": "rtx5090x2"}, host=SEED_BOX)
    assert seed.order == ["n1_local32", "n2_pool32"] and seed.repeats == 5 and seed.iterations == 1000
    assert seed.run_configs["n2_pool32"].cpu_pools == "8-39;48-79"
    assert seed.run_configs["n1_local32"].num_envs == 2048
    one = plan({"preset": "h200x1"}, host=H200_1)
    assert one.order == ["n1_pool7", "n1_pool15"]
    assert [len(rc.pool_cpus()[0]) for rc in one.run_configs.values()] == [7, 15]
    two = plan({"preset": "h200x2"}, host=H200_2)
    pools = [len(c) for rc in two.run_configs.values() for c in rc.pool_cpus()]
    assert two.order == ["n1_local", "n2_pool"] and len(set(pools)) == 1


def test_config_overrides_merge_into_the_preset():
    p = plan({"iterations": 40, "run_set": "mine",
              "run_configs": {"n2_cpu": {"num_envs": 4, "overrides": {"env-pipeline": "serial"}}}})
    assert p.iterations == 40 and p.run_set == "mine"
    rc = p.run_configs["n2_cpu"]
    assert rc.num_envs == 4 and rc.devices == "cpu,cpu"           # merged field by field
    assert rc.overrides == {"replay-per-env": 64, "env-pipeline": "serial"}  # preset defaults + the config's


def test_train_command_and_environment():
    p = plan({"preset": "rtx5090x2", "run_configs": {"n2_pool32": {"cuda_visible_devices": "4,5"}}}, host=SEED_BOX)
    run = p.runs[1]
    cmd = train_command(p, run, "DIR", "model.mjb")
    assert cmd[:2] == ["sacscale", "train"]
    args = dict(zip(cmd[2::2], cmd[3::2]))
    assert args["--devices"] == "0,1" and args["--collector-cpu-ids"] == "8-39;48-79"
    assert args["--iterations"] == "1000" and args["--num-envs"] == "2048" and args["--log-dir"] == "DIR"
    env = run_environment(p, run)
    assert env["CUDA_VISIBLE_DEVICES"] == "4,5" and env["NCCL_P2P_DISABLE"] == "1"
    assert "CUDA_VISIBLE_DEVICES" not in run_environment(p, p.runs[0])  # never invented


@pytest.mark.parametrize(
    "config, key",
    [
        ({"preset": "nope"}, "preset: unknown preset 'nope'"),
        ({"repeats": 0}, "repeats: must be an integer >= 1"),
        ({"iterations": -3}, "iterations: must be an integer >= 1"),
        ({"order": ["n1_cpu", "n3_cpu"]}, "order: 'n3_cpu' has no run configuration"),
        ({"run_configs": {"n2_cpu": {"cpu_pools": ["0-1", "1"]}}},
         "run_configs.n2_cpu.cpu_pools: the pools of ranks 0 and 1 overlap on CPUs 1"),
        ({"run_configs": {"n2_cpu": {"cpu_pools": ["0"]}}},
         "run_configs.n2_cpu.cpu_pools: 1 CPU list(s) for 2 rank(s)"),
        ({"run_configs": {"n1_cpu": {"cpu_pools": ["0-7"]}}},
         "run_configs.n1_cpu.cpu_pools: rank 0 names CPUs 2-7 that do not exist"),
        ({"run_configs": {"n1_cpu": {"devices": "gpu"}}}, "run_configs.n1_cpu.devices"),
        ({"run_configs": {"n1_cpu": {"overrides": {"iterations": 5}}}}, "run_configs.n1_cpu.overrides.iterations"),
        # the abbreviations: argparse would have taken them as --seed / --iterations
        ({"run_configs": {"n1_cpu": {"overrides": {"see": 99}}}}, "run_configs.n1_cpu.overrides.see: not an option"),
        ({"run_configs": {"n1_cpu": {"overrides": {"iter": 12}}}}, "run_configs.n1_cpu.overrides.iter: not an option"),
        ({"run_configs": {"n1_cpu": {"overrides": {"model": "other.mjb"}}}},
         "run_configs.n1_cpu.overrides.model: set by the pipeline"),
        ({"run_configs": {"n1_cpu": {"overrides": {"seed": 3}}}},
         "run_configs.n1_cpu.overrides.seed: set by the pipeline"),
        ({"run_configs": {"n1_cpu": {"overrides": {"collector_cpu_ids": "0"}}}},
         "run_configs.n1_cpu.overrides.collector_cpu_ids: set by the pipeline"),
        ({"run_configs": {"n1_cpu": {"overrides": {"log-dir": "x"}}}},
         "run_configs.n1_cpu.overrides.log-dir: set by the pipeline"),
        ({"schedule": "random"}, "schedule: 'random' is not one of"),
        ({"pairs": [["n1_cpu", "n9"]]}, "pairs[0]"),
        ({"model": {"from_mjb": "no/such/model.mjb"}}, "model.from_mjb: no/such/model.mjb does not exist"),
        ({"model": {"from_mjb": "/dev/null"}}, "model.from_mjb: /dev/null is a device, not a model file (.mjb)"),
        ({"model": {"from_mjb": "/tmp"}}, "model.from_mjb: /tmp is a folder, not a model file (.mjb)"),
        ({"run_configs": {"n1_cpu": {"batch_size": 100000}}},
         "run_configs.n1_cpu.batch_size: 100000 is larger than the replay"),
        ({"run_configs": {"n1_cpu": {"overrides": {"replay-per-env": 9}}}},
         "run_configs.n1_cpu.overrides.replay-per-env: 9 rows per env hold less than the learning start"),
        # the replay cannot fit in any machine's memory: it failed in torch's allocator at the run
        ({"run_configs": {"n1_cpu": {"num_envs": 1048576, "overrides": {"replay-per-env": 1000000}}}},
         "run_configs.n1_cpu.num_envs: 1048576 envs x 1000000 replay rows per env (overrides.replay-per-env): the "
         "replay of 1 rank(s) on the CPU needs 1,676,757.8 GiB (1,048,576,000,000 rows of 1717 bytes a rank), more "
         "than this machine's "),
    ],
)
def test_semantic_errors_name_the_key(config, key):
    with pytest.raises(PlanError) as err:
        plan(config)
    assert str(err.value).startswith(key.split(":")[0])
    assert key in str(err.value)


MODEL_TAKEN_AS = ("every run of the set trains on the model prepared from it, as this user's own: use a copy of "
                  "your own, closed to others (chmod go-w)")


def _model_others_may_write(tmp_path, uid=None):
    """A model file that others may write (mode 666), given to `uid` where named."""
    model = tmp_path / "shared.mjb"
    model.write_bytes(b"not read at planning")
    model.chmod(0o666)
    if uid is not None:
        os.chown(model, uid, uid)
    return model


def test_a_model_file_others_may_write_is_refused_at_planning(tmp_path):
    """As a config file is: prepare-model would build every run's model from it later."""
    model = _model_others_may_write(tmp_path)
    with pytest.raises(PlanError) as err:
        plan({"model": {"from_mjb": str(model)}})
    assert str(err.value) == (f"model.from_mjb: model file {model}: is writable by other users (mode 0666); "
                              + MODEL_TAKEN_AS)


@pytest.mark.skipif(os.getuid() != 0, reason="giving a file to another user needs root")
def test_another_users_model_file_is_refused_at_planning_naming_the_owner(tmp_path):
    model = _model_others_may_write(tmp_path, uid=1001)
    with pytest.raises(PlanError) as err:
        plan({"model": {"from_mjb": str(model)}})
    assert str(err.value) == (f"model.from_mjb: model file {model}: belongs to uid 1001, another user; "
                              + MODEL_TAKEN_AS)


def test_a_model_file_in_a_folder_others_may_rename_in_is_refused_at_planning(tmp_path):
    folder = tmp_path / "open"
    folder.mkdir()
    folder.chmod(0o777)  # no sticky bit: anyone may swap a file in at the model's name
    model = folder / "g1.mjb"
    model.write_bytes(b"not read at planning")
    with pytest.raises(PlanError, match=r"^model\.from_mjb: model file .*: lies in .* before prepare-model reads it; "
                                        r"every run of the set trains on the model prepared from it"):
        plan({"model": {"from_mjb": str(model)}})


def test_errors_in_a_preset_name_the_preset():
    presets = {"auto": {"no_cuda": "bad"}, "presets": {"bad": {**PRESETS["presets"]["cpu"], "repeats": 0}}}
    with pytest.raises(PlanError, match=r"^repeats \(preset bad\): must be an integer >= 1"):
        resolve({"preset": "bad"}, presets, CPU_BOX)


def test_named_gpu_preset_on_a_small_machine_fails_on_cpus():
    with pytest.raises(PlanError, match=r"run_configs.n1_local32.cpu_pools \(preset rtx5090x2\): "
                                        r"rank 0 names CPUs 8-39 that do not exist"):
        plan({"preset": "rtx5090x2"})


def test_host_checks_can_be_deferred():
    p = plan({"preset": "rtx5090x2"}, check_host=False)
    assert p.gpus_needed() == 2


def test_override_names_come_from_the_trainers_parser():
    from sacscale.train.options import build_parser, option_names

    assert build_parser().allow_abbrev is False
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--see", "99"])  # an abbreviation of --seed is refused
    options = option_names()
    assert options["--seed"] == "seed" and options["--no-compile"] == "compile"
    p = plan({"run_configs": {"n1_cpu": {"overrides": {"compile": False, "extra": '{"gamma": 0.9}'}}}})
    cmd = train_command(p, p.runs[0], "DIR", None)
    assert "--no-compile" in cmd and cmd[cmd.index("--extra") + 1] == '{"gamma": 0.9}'


def test_every_trainer_option_the_pipeline_sets_is_owned():
    from sacscale.train.options import option_names
    from sacscale.pipeline.runplan import PIPELINE_OWNED

    p = plan()
    p.run_configs[p.runs[0].config].overrides = {}  # only what the pipeline itself passes
    options = option_names()
    set_by_pipeline = {options[a] for a in train_command(p, p.runs[0], "DIR", "m.mjb") if a.startswith("--")}
    assert set_by_pipeline <= set(PIPELINE_OWNED)


def test_a_run_in_a_few_words_for_the_terminal():
    from sacscale.pipeline.runplan import describe_run

    p = plan()
    assert [describe_run(p, r) for r in p.runs[:2]] == ["1 CPU rank, 24 iterations, run 1 of 4",
                                                        "2 CPU ranks, 24 iterations, run 2 of 4"]
    gpu = plan({"preset": "rtx5090x2"}, SEED_BOX)
    n2 = next(r for r in gpu.runs if r.config == "n2_pool32")
    assert describe_run(gpu, n2).startswith("2 GPUs, CPU pools 8-39;48-79, 1000 iterations, run ")


def test_model_timeout_s_from_the_config_over_the_preset():
    assert plan().model_timeout_s == 600  # the cpu preset's
    assert plan({"model_timeout_s": 90}).model_timeout_s == 90
    assert plan({"preset": "h200x1"}, H200_1).model_timeout_s == 1800  # no preset value: the built-in default


def test_a_schema_error_in_one_line():
    import jsonschema

    from sacscale.pipeline.runplan import config_error_line

    schema = yaml.safe_load((ROOT / "workflow" / "schemas" / "config.schema.yaml").read_text())

    def error(config):
        return config_error_line(next(jsonschema.Draft202012Validator(schema).iter_errors(config)))

    assert error({"repeat": 3}) == (
        "'repeat' was unexpected: not a config key (allowed: " + ", ".join(sorted(schema["properties"])) + ")")
    assert error({"probe": {"devices": "gpu0"}}).startswith("probe.devices: 'gpu0' does not match ")
    assert error({"run_configs": {"n1": {"num_envs": 0}}}) == "run_configs.n1.num_envs: 0 is less than the minimum of 1"


def test_the_shared_gpu_preset_runs_two_ranks_on_one_h200():
    p = plan({"preset": "h200x1_shared"}, host=H200_1)
    assert p.order == ["n1_pool7", "n2_shared"] and p.pairs == [("n1_pool7", "n2_shared")]
    assert (p.repeats, p.iterations, p.probe["devices"]) == (5, 1000, "0,0")
    two = next(r for r in p.runs if r.config == "n2_shared")
    cmd = train_command(p, two, "logs/x", None)
    assert cmd[cmd.index("--devices") + 1] == "0,0" and cmd[cmd.index("--allreduce") + 1] == "between-graphs"
    assert cmd[cmd.index("--collector-cpu-ids") + 1] == "1-7;9-15"
    assert cmd[cmd.index("--learner-cpu-ids") + 1] == "0;8"
    one = next(r for r in p.runs if r.config == "n1_pool7")
    cmd = train_command(p, one, "logs/x", None)
    assert cmd[cmd.index("--collector-cpu-ids") + 1] == "1-7" and cmd[cmd.index("--learner-cpu-ids") + 1] == "0"


@pytest.mark.parametrize("entry, message", [
    ({"devices": "0,0"}, "add overrides: {allreduce: between-graphs}"),
    ({"devices": "0,0", "overrides": {"allreduce": "in-graph"}}, "add overrides: {allreduce: between-graphs}"),
    ({"devices": "0,0", "trainer": "unilab"}, "repeats a GPU, which only our trainer supports"),
])
def test_a_repeated_gpu_without_the_sync_between_graphs_is_refused_naming_the_key(entry, message):
    config = {"preset": "h200x1", "order": ["x"], "pairs": [],
              "run_configs": {"x": {"cpu_pools": ["1-7", "9-15"], **entry}}}
    with pytest.raises(PlanError,
                       match=r"run_configs\.x\.devices: .*" + message.replace("{", r"\{").replace("}", r"\}")):
        plan(config, host=H200_1)


def test_a_repeated_gpu_with_the_sync_off_needs_no_placement():
    config = {"preset": "h200x1", "order": ["x"], "pairs": [],
              "run_configs": {"x": {"devices": "0,0", "cpu_pools": ["1-7", "9-15"], "overrides": {"grad-sync": "off"}}}}
    assert plan(config, host=H200_1).run_configs["x"].world_size == 2


def test_a_run_set_named_after_a_file_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "README.md").write_text("the sets")
    with pytest.raises(PlanError, match=r"run_set: results/README.md exists and is not a run set's folder"):
        plan({"run_set": "README.md"})
    (tmp_path / "results" / "link").symlink_to(tmp_path)
    with pytest.raises(PlanError, match="results/link is a symbolic link, and a run set's folder is a folder of"):
        plan({"run_set": "link"})
    assert plan({"run_set": "fresh"}).run_set == "fresh"


def test_a_configuration_compared_with_itself_is_refused():
    with pytest.raises(PlanError, match=r"pairs\[0\]: 'n1_pool7' compared with itself"):
        plan({"preset": "h200x1_shared", "pairs": [["n1_pool7", "n1_pool7"]]}, H200_1)


def test_results_on_another_disk_without_its_reports_is_refused_at_planning(tmp_path, monkeypatch):
    """results/ a link to another disk, reports/ this folder's own: the whole set was built,
    then its own verify job refused it (the report beside the set's name is not the one beside
    the set where it lies). Refused at planning, before any job; both on the disk passes."""
    checkout, store = tmp_path / "checkout", tmp_path / "store"
    (store / "results").mkdir(parents=True)
    (checkout / "reports").mkdir(parents=True)
    (checkout / "results").symlink_to(store / "results")
    monkeypatch.chdir(checkout)
    says = (f"run_set: results/fresh lies in {store / 'results'}, and reports/fresh ({checkout / 'reports' / 'fresh'})"
            f" is not the report folder beside it ({store / 'reports' / 'fresh'}): the pipeline writes the report "
            f"to reports/fresh, and verify checks the one beside the set where it lies, so the set would fail its "
            f"own verification; make reports a link to {store / 'reports'}, or keep results and reports both in "
            "this folder")
    with pytest.raises(PlanError, match="^" + re.escape(says) + "$"):
        plan({"run_set": "fresh"})
    (checkout / "reports").rmdir()
    (checkout / "reports").symlink_to(store / "reports")  # not there yet: made beside the set
    assert plan({"run_set": "fresh"}).run_set == "fresh"


def test_reports_linked_beside_this_folders_results_is_refused_at_planning(tmp_path, monkeypatch):
    """reports/ a link to another disk, results/ this folder's own: planning passed (the link
    resolves to itself) and the set's own verify refused it (its report is not in the checkout)."""
    checkout, store = tmp_path / "checkout", tmp_path / "store"
    (store / "reports").mkdir(parents=True)
    (checkout / "results").mkdir(parents=True)
    (checkout / "reports").symlink_to(store / "reports")
    monkeypatch.chdir(checkout)
    says = (f"run_set: results/fresh lies in {checkout / 'results'}, beside which reports ({checkout / 'reports'}) is "
            "a symbolic link: verify refuses a set whose report is not in the checkout, so the set would fail its "
            "own verification; make reports a folder of its own there, or link results to a folder named results "
            f"beside {store / 'reports'}")
    with pytest.raises(PlanError, match="^" + re.escape(says) + "$"):
        plan({"run_set": "fresh"})


def test_results_linked_to_a_folder_not_named_results_is_refused_at_planning(tmp_path, monkeypatch):
    (tmp_path / "sets").mkdir()
    (tmp_path / "checkout").mkdir()
    (tmp_path / "checkout" / "results").symlink_to(tmp_path / "sets")
    monkeypatch.chdir(tmp_path / "checkout")
    with pytest.raises(PlanError, match=re.escape(f"run_set: results/fresh lies in {tmp_path / 'sets'}, a folder "
                                                  "not named results (results/ is a link)")):
        plan({"run_set": "fresh"})
