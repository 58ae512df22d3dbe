"""A run env PYTHONIOENCODING other than UTF-8 passed planning (Python starts with any codec
it knows): with utf-16 each run's train.log was UTF-16, holding a library helper's
tracebacks, the run `completed`. Now planning refuses any encoding but UTF-8 (and an
unknown error handler) with one line naming the key; UTF-8 spellings pass."""

from pathlib import Path

import pytest
import yaml

from sacscale.pipeline.runplan import Host, PlanError, resolve

PRESETS = yaml.safe_load((Path(__file__).resolve().parents[2] / "workflow" / "presets.yaml").read_text())
CPU_BOX = Host(cuda_devices=0, cpus=frozenset(range(2)))


def plan(value):
    return resolve({"preset": "cpu", "run_configs": {"n1_cpu": {"env": {"PYTHONIOENCODING": value}}}},
                   PRESETS, CPU_BOX)


@pytest.mark.parametrize("value, says", [
    ("utf-16", r"'utf-16' \(utf-16\) would write the run's output \(train\.log\) in it, not in UTF-8, which its "
               r"logs are read as"),
    ("latin-1:replace", r"'latin-1' \(iso8859-1\) would write"),
    ("ascii", r"'ascii' \(ascii\) would write"),
    ("utf-8-sig", r"'utf-8-sig' \(utf-8-sig\) would write"),
    ("nosuchcodec", r"'nosuchcodec' is not an encoding Python knows"),
    ("utf-8:nosuchhandler", r"'nosuchhandler' is not an error handler Python knows"),
])
def test_an_io_encoding_other_than_utf8_is_refused_at_planning(value, says):
    with pytest.raises(PlanError, match=r"^run_configs\.n1_cpu\.env: PYTHONIOENCODING: " + says
                       + r".*; leave it out, or give utf-8$"):
        plan(value)


@pytest.mark.parametrize("value", ["utf-8", "UTF8", "utf_8:replace", ":strict"])
def test_utf8_spellings_pass(value):
    plan(value)
