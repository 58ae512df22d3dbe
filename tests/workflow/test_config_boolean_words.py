"""A boolean key given as the word true or false. Snakemake's `--config` reads Python
values, so `--config host_checks=false` is the text 'false', refused `'false' is not of type
'boolean'` with no word of how to write it (the docs' YAML says `false`). The refusal now
says: False on the command line, false unquoted in a file; for a key inside a mapping, which
`--config` gives Snakemake as text whatever is written, the --configfile form. Text is still not
taken as a boolean. An override YAML 1.1 read as a boolean (`grad-sync: off`) for an option
that takes a value says so and how to quote it."""

from pathlib import Path

import jsonschema
import pytest
import yaml

from sacscale.pipeline.runplan import config_error_line

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = yaml.safe_load((ROOT / "workflow" / "schemas" / "config.schema.yaml").read_text())


def line(config: dict) -> str:
    return config_error_line(next(jsonschema.Draft202012Validator(SCHEMA).iter_errors(config)))


@pytest.mark.parametrize(("given", "word"), [("false", "False"), ("TRUE", "True"), ("no", "False"), ("yes", "True")])
def test_a_boolean_given_as_a_word_says_how_to_write_it(given, word):
    assert line({"host_checks": given}) == (
        f"host_checks: {given!r} is not of type 'boolean' (--config reads Python values: write {word} there, "
        f"capitalised; in a --configfile, {word.lower()} unquoted)")


def test_a_nested_boolean_and_one_that_may_be_null_say_it_too():
    assert line({"video": {"enabled": "off"}}).endswith("put it in a --configfile, false unquoted: "
                                                        "video: {enabled: false})")


def test_other_text_is_refused_as_before():
    assert line({"host_checks": "maybe"}) == "host_checks: 'maybe' is not of type 'boolean'"
    assert line({"iterations": "false"}) == "iterations: 'false' is not of type 'integer', 'null'"


def test_a_nested_boolean_says_to_use_a_configfile():
    """Snakemake reads every value inside a `--config` mapping as text: `False` there is refused
    as 'False' again, so the hint for a nested key names the --configfile form."""
    assert line({"evaluation": {"enabled": "False"}}) == (
        "evaluation.enabled: 'False' is not of type 'boolean' (inside a mapping, --config gives Snakemake "
        "text only: put it in a --configfile, false unquoted: evaluation: {enabled: false})")


def test_snakemake_reads_a_nested_false_on_config_as_text():
    from snakemake.cli import parse_config

    assert parse_config(['evaluation={"enabled": False}']) == {"evaluation": {"enabled": "False"}}


RUN_CONFIG = {"preset": "cpu", "order": ["x"], "pairs": []}


def overrides_line(overrides: dict) -> str:
    from sacscale.pipeline.runplan import Host, PlanError, resolve

    presets = yaml.safe_load((ROOT / "workflow" / "presets.yaml").read_text())
    config = {**RUN_CONFIG, "run_configs": {"x": {"devices": "cpu", "overrides": overrides}}}
    with pytest.raises(PlanError) as caught:
        resolve(config, presets, Host(cuda_devices=0, cpus=frozenset(range(2))))
    return str(caught.value)


@pytest.mark.parametrize(("text", "word"), [("off", "off"), ("no", "off"), ("on", "on"), ("yes", "on")])
def test_an_override_yaml_read_as_a_boolean_says_to_quote_it(text, word):
    value = yaml.safe_load(f"v: {text}")["v"]
    assert overrides_line({"grad-sync": value}) == (
        f"run_configs.x.overrides.grad-sync: YAML read the unquoted value as the boolean {str(value).lower()} "
        f"(as it reads {'off, no, false' if value is False else 'on, yes, true'}), but --grad-sync takes a value; "
        f'quote the word: grad-sync: "{word}"')


def test_an_override_read_as_a_boolean_without_such_a_value_names_its_values():
    assert overrides_line({"tilt-obs": True}).endswith("but --tilt-obs takes a value; give one of "
                                                       "world, torso")
    assert overrides_line({"num-critic-updates": False}).endswith("takes a value; give the value it takes")
