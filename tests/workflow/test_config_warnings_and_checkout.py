"""Config values that passed planning and broke a run later:
PYTHONWARNINGS with an `error` action (Python starts, then the first library warning ends
the run, after the model and the probe)."""

from pathlib import Path

import pytest
import yaml

from sacscale.pipeline.runplan import Host, PlanError, resolve

PRESETS = yaml.safe_load((Path(__file__).resolve().parents[2] / "workflow" / "presets.yaml").read_text())
CPU_BOX = Host(cuda_devices=0, cpus=frozenset(range(2)))


def plan(**config):
    return resolve({"preset": "cpu", **config}, PRESETS, CPU_BOX)


@pytest.mark.parametrize("value", ["error", "e", "ERR", "ignore,error::DeprecationWarning", " error:::mod"])
def test_warnings_made_errors_are_refused(value):
    with pytest.raises(PlanError, match=r"run_defaults\.env: PYTHONWARNINGS: its filter .* an error"):
        plan(run_defaults={"env": {"PYTHONWARNINGS": value}})


@pytest.mark.parametrize("value", ["ignore", "default", "ignore::DeprecationWarning,always::UserWarning", ""])
def test_warning_filters_that_end_nothing_pass(value):
    plan(run_defaults={"env": {"PYTHONWARNINGS": value}})


def test_a_checkout_snakemake_cannot_keep_its_state_in_is_named(tmp_path, monkeypatch):
    """A read-only checkout: Snakemake's own traceback (`OSError: [Errno 30]` making
    .snakemake/), even for `snakemake -n` or `snakemake verify`."""
    from sacscale.pipeline import config_errors
    from sacscale.pipeline.runplan import check_state_folder
    monkeypatch.setattr(config_errors.os, "access", lambda path, mode: False)
    with pytest.raises(PlanError, match=rf"{tmp_path}: not writable \(a read-only checkout\?\); Snakemake keeps its "
                                        rf"state in {tmp_path}/\.snakemake; .* sacscale verify results/<set>"):
        check_state_folder(str(tmp_path))


def test_a_writable_checkout_passes(tmp_path):
    from sacscale.pipeline.runplan import check_state_folder
    check_state_folder(str(tmp_path))


@pytest.mark.parametrize("extra, says", [
    ("[" * 1500 + "]" * 1500, "JSON nested too deep"),  # a RecursionError traceback through Snakemake
    ('{"lr": 1e-3, "lr": 1}', "the key 'lr' is given twice"),  # the last value kept without a word
])
def test_an_extra_setting_that_json_reads_two_ways_or_not_at_all_is_named(extra, says):
    """Seventh pass: --extra is read as the project's records are (sacscale.reading), by the
    trainer's parser and so by the plan, which parses every override with it."""
    with pytest.raises(PlanError, match=r"run_configs\.n1_cpu\.overrides\.extra: argument --extra: .*" + says):
        plan(run_configs={"n1_cpu": {"overrides": {"extra": extra}}})


def test_description_with_a_blank_letter_is_refused():
    """A Hangul filler (a letter that shows as nothing) passed the config's check of
    invisible characters."""
    from sacscale.pipeline.config_check import ConfigError, check_values
    with pytest.raises(ConfigError, match=r"U\+3164"):
        check_values({"run_configs": {"n1_cpu": {"description": "a\u3164b"}}}, "config")
