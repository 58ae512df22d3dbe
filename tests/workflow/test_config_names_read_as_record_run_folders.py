"""Config names the schema's pattern takes that read as record-run's own folder names: a
configuration `n1_cpu.failed-20260101T000000.000000Z` planned the run
`cpu_r1_n1_cpu.failed-20260101T000000.000000Z`, exactly the name record-run gives a failed
attempt of `cpu_r1_n1_cpu`; `n1.partial` trained in `.cpu_r1_n1.partial.partial`. Every
such name (a configuration, the prefix, the run set) is refused at planning in one line
naming the key and the form; the forms come from the constants record-run names its
folders with."""

from pathlib import Path

import pytest
import yaml

from sacscale.locks import LOCK, TRAINER_LOCK
from sacscale.pipeline.run_folder_names import SET_ASIDE_AS, WORK_SUFFIX, record_run_form, stamp
from sacscale.pipeline.runplan import Host, PlanError, resolve

# a fixed stamp in stamp()'s form: test ids must be the same in every pytest-xdist worker
STAMP = "20260101T000000.000000Z"

PRESETS = yaml.safe_load((Path(__file__).resolve().parents[2] / "workflow" / "presets.yaml").read_text())
CPU_BOX = Host(cuda_devices=0, cpus=frozenset(range(2)))
STAMPED = "n1_cpu.failed-20260101T000000.000000Z"


def plan(name, **config):
    return resolve({"preset": "cpu", "run_set": "c50q", "repeats": 1, "iterations": 20,
                    "order": ["n1_cpu", name],
                    "run_configs": {name: {"devices": "cpu,cpu", "cpu_pools": "auto", "description": "x"}}, **config},
                   PRESETS, CPU_BOX, check_host=False)


def test_a_configuration_named_as_a_failed_attempt_is_refused():
    with pytest.raises(PlanError) as refused:
        plan(STAMPED)
    assert str(refused.value) == (
        f"run_configs.{STAMPED}: '.failed-20260101T000000.000000Z' is record-run's own suffix for an attempt set "
        "aside in the attic (<run>.<why>-<stamp>); a run named so would pass for one of them: rename the "
        "configuration")


def test_a_configuration_named_as_a_work_folder_is_refused():
    with pytest.raises(PlanError) as refused:
        plan("n1.partial")
    assert str(refused.value) == (
        "run_configs.n1.partial: '.partial' is record-run's own suffix for the folder a run trains in "
        "(.<run>.partial); a run named so would pass for one of them: rename the configuration")


@pytest.mark.parametrize("name", [f"n1.{why}-{STAMP}" for why in SET_ASIDE_AS]
                         + [f"n1{WORK_SUFFIX}", f"n1{LOCK}", f"n1{TRAINER_LOCK}", f"n1{WORK_SUFFIX}.x",
                            f"n1.superseded-{STAMP}_x"])
def test_every_form_record_run_names_its_folders_with_is_refused(name):
    assert len(STAMP) == len(stamp())
    assert record_run_form(name) is not None
    with pytest.raises(PlanError, match=rf"\Arun_configs\.{name}: '[^']+' is record-run's own suffix for "):
        plan(name)


@pytest.mark.parametrize("name", ["n1.partially", "n1.lockstep", "n1_partial", "n1.failed", "n1.failed-x",
                                  "n1.v2", "n2_shared.nosync"])
def test_names_near_those_forms_pass(name):
    assert record_run_form(name) is None
    assert [r.name for r in plan(name).runs] == ["cpu_r1_n1_cpu", f"cpu_r1_{name}"]


@pytest.mark.parametrize("key", ["run_set", "prefix"])
def test_a_run_set_or_prefix_named_so_is_refused(key):
    with pytest.raises(PlanError) as refused:
        plan("n1", **{key: f"s{LOCK}"})
    assert str(refused.value) == (
        f"{key}: 's.lock': '.lock' is record-run's own suffix for the lock beside a run's folder (.<folder>.lock); "
        "a name holding it would pass for one of them: choose another")
