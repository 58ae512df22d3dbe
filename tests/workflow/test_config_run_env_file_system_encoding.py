"""A run env that makes Python's file-system encoding ASCII (LC_ALL=C with PYTHONUTF8=0 and
PYTHONCOERCECLOCALE=0) passed planning; a run whose set folder or checkout is named with
non-ASCII letters would then fail writing its UTF-8 records, after the model and the probe.
Now planning refuses it with one line naming the keys; a UTF-8 locale, or the C locale with
Python's own UTF-8 mode (or, for LANG/LC_CTYPE, its coercion) left on, plans."""

from pathlib import Path

import pytest
import yaml

from sacscale.pipeline.runplan import Host, PlanError, resolve

PRESETS = yaml.safe_load((Path(__file__).resolve().parents[2] / "workflow" / "presets.yaml").read_text())
CPU_BOX = Host(cuda_devices=0, cpus=frozenset(range(2)))


def plan(env):
    return resolve({"preset": "cpu", "run_configs": {"n1_cpu": {"env": env}}}, PRESETS, CPU_BOX)


@pytest.mark.parametrize("env", [{"LC_ALL": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"},
                                 {"LC_ALL": "POSIX", "PYTHONUTF8": "0"}])  # LC_ALL is never coerced
def test_an_ascii_file_system_encoding_is_refused_naming_the_keys(env):
    with pytest.raises(PlanError) as info:
        plan(env)
    assert str(info.value) == (
        f"run_configs.n1_cpu.env: {', '.join(sorted(env))}: Python's file-system encoding would be "
        "ascii, not UTF-8 (a C/POSIX locale, not coerced, with UTF-8 mode off), so a non-ASCII folder name "
        "(the set's, the checkout's) would fail the run's UTF-8 records after the model and the probe; leave them "
        "out, or set PYTHONUTF8=1 or a UTF-8 locale")


@pytest.mark.parametrize("env", [{"LC_ALL": "C"}, {"LANG": "C", "PYTHONUTF8": "0"},
                                 {"LC_ALL": "C", "PYTHONCOERCECLOCALE": "0"}, {"LC_ALL": "C.UTF-8", "PYTHONUTF8": "0"},
                                 {"LC_ALL": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "1"}])
def test_a_utf8_file_system_encoding_plans(env):
    plan(env)
