"""Config values (docs/faults.md row 20): a huge list
refused before it is parsed again or walked by the schema, timeouts with a lower bound,
invisible formatting characters (bidirectional overrides, zero-width, line separators),
integers too long for Python's conversion and too long to print."""

import time
from pathlib import Path

import jsonschema
import pytest
import yaml

from sacscale.pipeline import config_check
from sacscale.pipeline.runplan import Host, PlanError, check_config, resolve

ROOT = Path(__file__).resolve().parents[2]
PRESETS = yaml.safe_load((ROOT / "workflow" / "presets.yaml").read_text())
SCHEMA = yaml.safe_load((ROOT / "workflow" / "schemas" / "config.schema.yaml").read_text())
CPU_BOX = Host(cuda_devices=0, cpus=frozenset(range(2)))


def plan(config):
    return resolve({"preset": "cpu", **config}, PRESETS, CPU_BOX)


def schema_errors(config):
    return [e.message for e in jsonschema.Draft202012Validator(SCHEMA).iter_errors(config)]


def test_a_huge_order_list_is_refused_before_the_file_is_parsed_again(tmp_path):
    """540 KB of `order` took 70 s on a loaded machine: parsed again strictly, then walked
    and formatted by the schema. Now the loaded config's list lengths are checked first."""
    order = [f"n{i:07d}" for i in range(54_000)]
    path = tmp_path / "big.yaml"
    path.write_text(yaml.safe_dump({"order": order}))
    t0 = time.monotonic()
    with pytest.raises(PlanError, match=r"^order: a list of 54000 items, more than 4096$"):
        check_config([path], {"order": order})
    assert time.monotonic() - t0 < 1.0


def test_the_strict_parse_stops_at_the_list_limit(tmp_path):
    """A list in a file whose loaded value was replaced (a later config file): the strict
    parse itself stops at the limit, naming the line, instead of reading on."""
    path = tmp_path / "big.yaml"
    path.write_text("order:\n" + "".join(f"- n{i}\n" for i in range(54_000)))
    t0 = time.monotonic()
    with pytest.raises(config_check.ConfigError, match=r"big.yaml: line 4098: a list of more than 4096 items"):
        config_check.check_file(path)
    assert time.monotonic() - t0 < 2.0


@pytest.mark.parametrize("value", [1e-320, 5e-324, 1e-9, 0.5])
@pytest.mark.parametrize("key", ["run", "model", "probe"])
def test_an_absurdly_small_timeout_is_refused_naming_the_lower_bound(value, key):
    config = {"run": {"run_configs": {"n1_cpu": {"timeout_s": value}}}, "model": {"model_timeout_s": value},
              "probe": {"probe": {"timeout_s": value}}}[key]
    with pytest.raises(PlanError, match=r"must be a number of seconds in \[1, 2592000\], got"):
        plan(config)
    assert any("less than the minimum of 1" in m for m in schema_errors(config)), schema_errors(config)


def test_a_one_second_timeout_passes():
    plan({"run_configs": {"n1_cpu": {"timeout_s": 1}}, "model_timeout_s": 1.0})


@pytest.mark.parametrize("char", ["\u202e", "\u2066", "\u200b", "\u200d", "\u2028", "\u2029", "\ufeff", "\u00ad"])
def test_invisible_formatting_characters_are_refused_naming_the_key(char):
    """A description that reads one way in the report and the terminal and is another."""
    with pytest.raises(PlanError, match=r"^run_configs\.n1_cpu\.description: holds an invisible formatting "
                                        r"character"):
        plan({"run_configs": {"n1_cpu": {"description": f"fast{char}lanoitpo"}}})


def test_visible_unicode_passes():
    plan({"run_configs": {"n1_cpu": {"description": "Düsseldorf ✓ 1,5× schneller 🙂"}}})


def test_an_integer_longer_than_python_converts_is_one_line(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("repeats: " + "9" * 5000 + "\n")
    with pytest.raises(config_check.ConfigError, match=r"c.yaml: not a usable value \(Exceeds the limit"):
        config_check.check_file(path)


def test_a_huge_integer_is_named_by_its_size_not_printed():
    with pytest.raises(PlanError, match=r"^iterations: must be an integer >= 1 and <= 1000000000, got a number "
                                        r"of about 400 digits$"):
        plan({"iterations": 10**400})
    with pytest.raises(PlanError, match=r"got a number of about 5000 digits$"):
        plan({"iterations": 10**5000})  # repr() of it raises ValueError
