"""A boolean key given as the word true or false. Snakemake's `--config` reads Python
values, so `--config host_checks=false` is the text 'false', refused `'false' is not of type
'boolean'` with no word of how to write it (the docs' YAML says `false`). The refusal now
says: False on the command line, false unquoted in a file. Text is still not taken as a
boolean."""

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
    assert line({"video": {"enabled": "off"}}).endswith("write False there, capitalised; in a --configfile, "
                                                        "false unquoted)")


def test_other_text_is_refused_as_before():
    assert line({"host_checks": "maybe"}) == "host_checks: 'maybe' is not of type 'boolean'"
    assert line({"iterations": "false"}) == "iterations: 'false' is not of type 'integer', 'null'"
