"""`snakemake --lint`, and bad configurations failing before anything runs, naming the key."""

import re
import tomllib

import pytest
import yaml
from pipeline_helpers import REPO, snakemake


def test_lint_is_clean(workflow_dir):
    proc = snakemake(workflow_dir, "--lint")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Congratulations" in proc.stdout + proc.stderr


def test_dry_run_of_the_default_config_plans_the_cpu_chain(workflow_dir):
    proc = snakemake(workflow_dir, "-n", "--cores", "1")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "sacscale: preset cpu (preset auto: no CUDA device visible" in out
    for rule in ("plan", "verify_env", "prepare_model", "probe_correctness", "train_run", "analyze_run",
                 "aggregate", "manifest", "verify_evidence", "report"):
        assert rule in out
    # each job is one short line, not its shell command (the default profile does not set printshellcmds)
    assert "Job 5: training cpu_r1_n1_cpu (1 CPU rank, 24 iterations, run 1 of 4)" in out, out
    assert "Shell command" not in out and "--resolved-json" not in out


def _rule_blocks():
    """(file, rule name, its text) of every rule of the workflow files."""
    for path in [REPO / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))]:
        text = path.read_text()
        starts = [(m.start(), m.group(1)) for m in re.finditer(r"^rule (\w+):", text, flags=re.M)]
        for (start, name), (end, _) in zip(starts, starts[1:] + [(len(text), None)]):
            yield path.name, name, text[start:end]


def test_every_rule_that_runs_something_has_a_benchmark_and_a_message():
    rules = list(_rule_blocks())
    acting = [(f, n, b) for f, n, b in rules if re.search(r"^    (shell|run|script):", b, flags=re.M)]
    assert {n for _, n, _ in acting} >= {"plan", "verify_env", "prepare_model", "probe_correctness", "train_run",
                                         "analyze_run", "evaluate_run", "aggregate", "manifest",
                                         "verify_evidence", "report", "verify"}
    for path, name, block in acting:
        assert "\n    benchmark:\n" in block, f"{path}: rule {name} has no benchmark"
        assert "\n    message:\n" in block, f"{path}: rule {name} has no message"
    # the others only collect targets
    assert {n for _, n, _ in rules} - {n for _, n, _ in acting} == {"all", "train", "metrics"}


def _snakefile_config_error(workflow_dir, entries=(), configfile=None) -> str:
    """The line the Snakefile stops with for config.yaml + `--configfile` + `--config
    ENTRIES`, found in this process through the calls it makes before any rule (the strict
    file checks, the schema, the plan) on the config as Snakemake merges it; "" if none.
    Each kind of error also goes through a real `snakemake -n` below: the wiring, the
    single line, nothing run."""
    from snakemake.cli import parse_config
    from snakemake.common.configfile import load_configfile
    from snakemake.exceptions import WorkflowError
    from snakemake.utils import update_config, validate

    from sacscale.pipeline import runplan

    files = [workflow_dir / "config.yaml"] + ([workflow_dir / configfile] if configfile else [])
    config: dict = {}
    for path in files:
        update_config(config, load_configfile(str(path)))
    update_config(config, parse_config(list(entries)))
    try:
        runplan.check_config([str(f) for f in files], config)
    except runplan.PlanError as exc:
        return f"config error: {exc}"
    try:
        validate(config, str(workflow_dir / "workflow" / "schemas" / "config.schema.yaml"))
    except WorkflowError as exc:
        return runplan.config_error_message(exc)
    presets = yaml.safe_load((workflow_dir / "workflow" / "presets.yaml").read_text())
    try:
        runplan.resolve(config, presets, check_host=config.get("host_checks", True))
    except runplan.PlanError as exc:
        return f"config error: {exc}"
    return ""


def _fails_before_any_rule_with_one_line(workflow_dir, *args, timeout=600) -> str:
    """A real `snakemake -n` that must fail on the config: its output, checked to hold no
    traceback and no results folder."""
    proc = snakemake(workflow_dir, "-n", "--cores", "1", *args, timeout=timeout)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "Traceback" not in out and not (workflow_dir / "results").exists(), out[-3000:]
    return out


SCHEMA_ERRORS = [
    (["repeats=0"], ["repeats", "minimum"]),
    (["iterations=-5"], ["iterations", "minimum"]),
    (["repeat=3"], ["'repeat' was unexpected"]),
    (["order=7"], ["order", "not of type"]),
    (["prefix=bad name"], ["prefix", "does not match"]),
    (["model={expect_sha256: xyz}"], ["expect_sha256", "does not match"]),
]


@pytest.mark.parametrize("config, names", SCHEMA_ERRORS)
def test_schema_errors_name_the_key(workflow_dir, config, names):
    line = _snakefile_config_error(workflow_dir, config)
    assert line.startswith("Error validating config file"), line
    for name in names:
        assert name in line, line


def test_a_schema_error_stops_snakemake_with_one_line(workflow_dir):
    config, names = SCHEMA_ERRORS[0]
    out = _fails_before_any_rule_with_one_line(workflow_dir, "--config", *config)
    (line,) = [x for x in out.splitlines() if x.startswith("Error validating config file")]
    assert line == _snakefile_config_error(workflow_dir, config) and all(name in line for name in names), out
    # one line, not the whole schema
    assert "Failed validating" not in out and "$schema" not in out and "description" not in out, out


def test_an_unknown_key_lists_the_allowed_keys(workflow_dir):
    proc = snakemake(workflow_dir, "-n", "--cores", "1", "--config", "iteration=5")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "Error validating config file: 'iteration' was unexpected: not a config key (allowed: " in out, out
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    (line,) = [x for x in out.splitlines() if "'iteration' was unexpected" in x]
    assert all(key in line for key in schema["properties"])
    (workflow_dir / "nested.yaml").write_text("probe: {iteration: 2}\n")
    assert "'iteration' was unexpected: not a key of probe (allowed: compile_loss, devices, iterations, " in (
        _snakefile_config_error(workflow_dir, configfile="nested.yaml"))


def test_model_timeout_s_is_a_config_key(workflow_dir):
    proc = snakemake(workflow_dir, "-n", "--cores", "1", "-p", "prepare_model", "--config", "model_timeout_s=77")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "timeout --foreground --kill-after=30 77.0 sacscale prepare-model" in out


def test_the_manifest_keeps_the_policies_a_claim_rests_on(workflow_dir):
    """A new set is of the current evidence format (--scope): the best-evaluated run's
    policy stays, the others move to logs/<set>/left_out; keep_policies: all keeps every one."""
    def manifest_command(*args):
        proc = snakemake(workflow_dir, "-n", "--cores", "1", "-p", "manifest", *args)
        out = proc.stdout + proc.stderr
        assert proc.returncode == 0, out
        (cmd,) = re.findall(r"^Shell command: (sacscale manifest .*)$", out, flags=re.M)
        return cmd

    evals = " ".join(f"results/cpu/eval/{r}.json" for r in ("cpu_r1_n1_cpu", "cpu_r1_n2_cpu", "cpu_r2_n2_cpu",
                                                              "cpu_r2_n1_cpu"))
    assert f"results/cpu --scope --keep-best {evals} --left-out-dir logs/cpu/left_out --output" in manifest_command()
    assert ("--scope --keep-policies cpu_r1_n1_cpu cpu_r1_n2_cpu cpu_r2_n2_cpu cpu_r2_n1_cpu --left-out-dir "
            "logs/cpu/left_out --output") in manifest_command("--config", "keep_policies=all")


@pytest.mark.parametrize(
    "config, message",
    [
        ({"preset": "nope"}, "config error: preset: unknown preset 'nope'"),
        ({"order": ["n1_cpu", "n9"]}, "config error: order: 'n9' has no run configuration"),
        ({"run_configs": {"n2_cpu": {"cpu_pools": ["0-1", "1"]}}},
         "config error: run_configs.n2_cpu.cpu_pools: the pools of ranks 0 and 1 overlap on CPUs 1"),
        ({"run_configs": {"n2_cpu": {"cpu_pools": "0"}}},
         "config error: run_configs.n2_cpu.cpu_pools: 1 CPU list(s) for 2 rank(s)"),
        ({"run_configs": {"n1_cpu": {"cpu_pools": ["4000-4001"]}}},
         "config error: run_configs.n1_cpu.cpu_pools: rank 0 names CPUs 4000-4001 that do not exist"),
        ({"run_configs": {"n1_cpu": {"cpu_pool": "0"}}}, "'cpu_pool' was unexpected"),
    ],
)
def test_semantic_errors_name_the_key(workflow_dir, config, message):
    (workflow_dir / "bad.yaml").write_text(yaml.safe_dump(config))
    assert message in _snakefile_config_error(workflow_dir, configfile="bad.yaml")


def test_a_semantic_error_stops_snakemake_naming_the_key(workflow_dir):
    (workflow_dir / "bad.yaml").write_text(yaml.safe_dump({"run_configs": {"n2_cpu": {"cpu_pools": ["0-1", "1"]}}}))
    out = _fails_before_any_rule_with_one_line(workflow_dir, "--configfile", "bad.yaml")
    assert "config error: run_configs.n2_cpu.cpu_pools: the pools of ranks 0 and 1 overlap on CPUs 1" in out, out


def _alias_bomb() -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    return "\n".join(lines) + "\nrun_configs: {n1_cpu: {description: *a8}}\n"


BAD_FILES = [
    ("repeats: 2\nrepeats: 3\n", "bad.yaml: line 2: duplicate key 'repeats'"),
    (_alias_bomb(), "bad.yaml: line 8: more than 64 YAML aliases"),
    ('run_set: "set\\n"\n', "bad.yaml: run_set: holds a control character ('\\n')"),
    ("run_configs: {n1_cpu: {timeout_s: .inf}}\n", "bad.yaml: run_configs.n1_cpu.timeout_s: inf is not a finite"),
    ("repeats: 1000000000000\n",
     "Error validating config file: repeats: 1000000000000 is greater than the maximum"),
    ("run_configs: {n1_cpu: {overrides: {extra: '{\"tau\": 0}'}}}\n",
     "config error: run_configs.n1_cpu.overrides.extra: --extra tau must be in [0.0001, 1], got 0"),
]


@pytest.mark.parametrize("text, message", BAD_FILES)
def test_bad_config_files_and_values_are_named(workflow_dir, text, message):
    (workflow_dir / "bad.yaml").write_text(text)
    assert message in _snakefile_config_error(workflow_dir, configfile="bad.yaml")


@pytest.mark.parametrize("text, message", [
    BAD_FILES[1],  # refused quickly, before the schema walks a billion aliases
    # the recorded matrix is read by the workflow (workflow/rules/common.smk), not the package
    ("planner: {matrix: deep.json}\npreset: planned\n", "planner.matrix: recorded matrix deep.json: nested"),
])
def test_bad_config_files_stop_snakemake_quickly_naming_them(workflow_dir, text, message):
    (workflow_dir / "bad.yaml").write_text(text)
    (workflow_dir / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    out = _fails_before_any_rule_with_one_line(workflow_dir, "--configfile", "bad.yaml", timeout=120)
    assert message in out, out[-3000:]


def test_conda_env_pins_the_same_versions_as_pyproject():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    env = yaml.safe_load((REPO / "envs" / "sacscale.yaml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    assert sorted(pip) == sorted(project)
    python = next(d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python="))
    assert re.match(r"python=3\.(1[1-9])", python)


def test_profiles_limit_the_gpu_lock():
    local = yaml.safe_load((REPO / "profiles" / "default" / "config.yaml").read_text())
    slurm = yaml.safe_load((REPO / "profiles" / "slurm" / "config.yaml").read_text())
    assert "gpu_lock=1" in local["resources"] and "gpu_lock=1" in slurm["resources"]
    assert slurm["executor"] == "slurm" and "train_run" in slurm["set-resources"]


def test_stage_targets_exist(workflow_dir):
    # one dry run for all four: a target that is no rule fails it, naming the target
    proc = snakemake(workflow_dir, "-n", "--cores", "1", "verify_env", "train", "metrics", "verify")
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_the_sets_verification_waits_for_the_best_runs_video(workflow_dir):
    # render-best writes into the report's folder, whose record of the choice verify reads
    (workflow_dir / "video.yaml").write_text("video: {enabled: true, seconds: 0.2, width: 64, height: 48, fps: 10}\n")
    proc = snakemake(workflow_dir, "--dag", "--cores", "1", "--configfile", "video.yaml")
    assert proc.returncode == 0, proc.stderr[-2000:]
    jobs = dict(re.findall(r'^\s*(\d+)\[label = "(\w+)"', proc.stdout, re.MULTILINE))
    node = {rule: number for number, rule in jobs.items()}
    assert f"{node['render_best_run']} -> {node['verify_evidence']}" in proc.stdout
