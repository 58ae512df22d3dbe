"""Every preset's description (the report prints it) states only what the preset does.

A description is prose; its facts are read with a few fixed phrases, and each fact found
must match the plan the preset resolves to. Numbers are digits or the words one to eight.

  "N repeats"                   the preset's repeats
  "N iterations"                its iterations
  "alternating", "counterbalanced"   its schedule
  "N H200s", "Nx RTX 5090"      the GPUs the plan needs (the machine it is written for)
  "N GPU(s)", "N-GPU"           (digits only) the GPUs of a configuration in the order
  "N-CPU", "pool(s) of N"       the size of a pool of a configuration in the order
  "N envs"                      num_envs of a configuration in the order
  "batch N"                     batch_size of a configuration in the order

A run configuration's description (every one a preset writes, in its order or not) is read
the same way for "N GPU(s)", the pool sizes and "N envs", against that configuration alone.
"""

import re
from pathlib import Path

import pytest
import yaml

from sacscale.parallel.matrix import plan_matrix
from sacscale.parallel.topology import Topology, parse_lscpu, parse_nvidia_topo
from sacscale.pipeline.runplan import SCHEDULES, Host, Plan, RunConfig, resolve
from pipeline_helpers import probe_as_wide

ROOT = Path(__file__).resolve().parents[2]
PRESETS = yaml.safe_load((ROOT / "workflow" / "presets.yaml").read_text())
FIXTURES = ROOT / "tests" / "parallel" / "fixtures" / "topology"
HOST = Host(cuda_devices=8, cpus=frozenset(range(256)))
WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}
NUMBER = r"(\d+|" + "|".join(WORDS) + ")"
POOL_SIZE = r"\b(\d+)-CPU\b|\bpools? of (\d+)\b"


def number(text: str) -> int:
    return WORDS.get(text.lower()) or int(text)


def found(pattern: str, text: str) -> set[int]:
    """The numbers the pattern's groups caught (the one group that matched, where several)."""
    matches = re.findall(pattern, " ".join(text.split()), flags=re.IGNORECASE)
    return {number(m if isinstance(m, str) else next(g for g in m if g)) for m in matches}


def gpus(rc: RunConfig) -> int:
    return 0 if rc.device_kind == "cpu" else len(set(rc.devices.split(",")))


def planned_matrix() -> dict:
    name = "eight_gpu_2x56_smt"
    topo = Topology(parse_lscpu((FIXTURES / f"{name}.lscpu").read_text()),
                    parse_nvidia_topo((FIXTURES / f"{name}.topo").read_text()))
    return plan_matrix(topo)


def plan_of(name: str) -> Plan:
    return resolve({"preset": name}, PRESETS, HOST, matrix=planned_matrix)


def preset_claims(text: str) -> dict[str, set]:
    """What a preset's description says, by fact (empty sets: not said)."""
    return {
        "repeats": found(r"\b" + NUMBER + r" repeats?\b", text),
        "iterations": found(r"(\d+) iterations\b", text),
        "schedule": {s for s in SCHEDULES if s in text.lower()},
        "machine GPUs": found(r"\b" + NUMBER + r"(?: ?x)? (?:H200s?|RTX 5090s?)\b", text),
        "configuration GPUs": found(r"\b(\d+)[ -]GPUs?\b", text),
        "pool sizes": found(POOL_SIZE, text),
        "envs": found(r"\b(\d+) envs\b", text),
        "batch": found(r"\bbatch (\d+)\b", text),
    }


def preset_facts(plan: Plan) -> dict[str, set]:
    configs = [plan.run_configs[c] for c in plan.order]
    return {
        "repeats": {plan.repeats},
        "iterations": {plan.iterations},
        "schedule": {plan.schedule},
        "machine GPUs": {plan.gpus_needed()},
        "configuration GPUs": {gpus(rc) for rc in configs},
        "pool sizes": {len(pool) for rc in configs for pool in rc.pool_cpus()},
        "envs": {rc.num_envs for rc in configs},
        "batch": {rc.batch_size for rc in configs},
    }


@pytest.mark.parametrize("name", sorted(PRESETS["presets"]))
def test_a_preset_description_states_only_what_the_preset_has(name):
    plan = plan_of(name)
    claims, facts = preset_claims(plan.description), preset_facts(plan)
    wrong = {fact: sorted(said) for fact, said in claims.items() if not said <= facts[fact]}
    assert not wrong, f"preset {name}: its description says {wrong}; the preset has " + str(
        {fact: sorted(facts[fact], key=str) for fact in wrong})


def every_configuration_of(name: str) -> Plan:
    """The preset's plan with every run configuration it writes in the order."""
    written = list(PRESETS["presets"][name].get("run_configs") or {})
    config = {"preset": name, "order": written, **probe_as_wide(PRESETS, name)} if written else {"preset": name}
    return resolve(config, PRESETS, HOST, matrix=planned_matrix)


@pytest.mark.parametrize("name", sorted(PRESETS["presets"]))
def test_a_run_configuration_description_states_only_what_it_has(name):
    plan = every_configuration_of(name)
    for rc in plan.run_configs.values():
        claims = {"GPUs": found(r"\b(\d+)[ -]GPUs?\b", rc.description),
                  "pool sizes": found(POOL_SIZE, rc.description),
                  "envs": found(r"\b(\d+) envs\b", rc.description)}
        facts = {"GPUs": {gpus(rc)}, "pool sizes": {len(p) for p in rc.pool_cpus()}, "envs": {rc.num_envs}}
        wrong = {fact: sorted(said) for fact, said in claims.items() if not said <= facts[fact]}
        assert not wrong, f"preset {name}, run configuration {rc.name}: {rc.description!r} says {wrong}"


def test_the_reading_finds_what_a_wrong_description_says():
    text = "2x RTX 5090, 2048 envs and batch 8192 per rank, 1000 iterations, 3 repeats, alternating"
    claims = preset_claims(text)
    assert claims["repeats"] == {3} and claims["iterations"] == {1000} and claims["schedule"] == {"alternating"}
    assert claims["machine GPUs"] == {2} and claims["envs"] == {2048} and claims["batch"] == {8192}
    assert preset_claims("Two H200s: 1 GPU against 2 GPUs, two 15-CPU pools")["machine GPUs"] == {2}
    assert preset_claims("1 GPU with a 15-CPU pool against 2 GPUs")["configuration GPUs"] == {1, 2}
    assert preset_claims("a 7-CPU and a 15-CPU pool, one pool of 64")["pool sizes"] == {7, 15, 64}
