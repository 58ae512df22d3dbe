"""PYTHONPLATLIBDIR in a run env is judged where Python reads it: under its prefix. Before,
a relative value was joined to the start folder, as a path variable's is, but Python joins it
to its prefix (<prefix>/<platlibdir>/python3.X: the standard library, lib-dynload,
site-packages); with the checkout deeper than the prefix, `../../../../home/eve/pl` stayed in
one's own folder from the start folder and reached eve's from the prefix, and planning's
start check then started Python with it, running her sitecustomize as the planner. Now only
a plain folder name is taken, and every path is judged before Python is started."""

import os
import sys
from pathlib import Path

import pytest
import yaml

from sacscale.pipeline.code_paths_env import _under_prefixes, check_code_paths
from sacscale.pipeline.runplan import Host, PlanError, resolve

REPO = Path(__file__).resolve().parents[2]
PRESETS = yaml.safe_load((REPO / "workflow" / "presets.yaml").read_text())
CPU_BOX = Host(cuda_devices=0, cpus=frozenset(range(2)))
WHY = ("is not a plain folder name (like lib or lib64): Python joins it to its prefix, not to the folder the run "
       "starts in, so a path there leads out of the prefix to a standard library and site-packages that are not "
       "the interpreter's; give a folder name or leave it out")


def refused(env) -> str:
    config = {"preset": "cpu", "run_configs": {"n1_cpu": {"env": env}}}
    with pytest.raises(PlanError) as info:
        resolve(config, PRESETS, CPU_BOX)
    return str(info.value)


def _planted_standard_library(folder: Path, marker: Path) -> None:
    """A standard library of links to this Python's, with a sitecustomize that leaves `marker`."""
    stdlib = folder / f"python{sys.version_info.major}.{sys.version_info.minor}"
    stdlib.mkdir(parents=True)
    real = Path(os.__file__).parent
    for entry in real.iterdir():
        if entry.name not in ("site-packages", "sitecustomize.py"):
            (stdlib / entry.name).symlink_to(entry)
    (stdlib / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'w').close()\n")


def test_a_relative_platlibdir_reaching_out_of_the_prefix_is_refused_before_python_starts(tmp_path, monkeypatch):
    marker = tmp_path / "planted_code_ran"
    planted = tmp_path / "eve" / "pl"
    _planted_standard_library(planted, marker)
    value = os.path.relpath(planted, sys.base_prefix)  # from the prefix Python joins it to
    ups = value.split("/").count("..")
    start = tmp_path.joinpath(*["d"] * ups)  # deeper than the prefix: from here the value stays in tmp_path
    start.mkdir(parents=True)
    monkeypatch.chdir(start)
    message = refused({"PYTHONPLATLIBDIR": value})
    assert not marker.exists(), "the planted sitecustomize ran during planning"
    assert message == f"run_configs.n1_cpu.env: PYTHONPLATLIBDIR: {value!r} {WHY}"


@pytest.mark.parametrize("value", ["/tmp/pl", "..", ".", "lib/../../x", "./lib"])
def test_a_path_or_dots_as_platlibdir_is_refused(value):
    assert refused({"PYTHONPLATLIBDIR": value}) == f"run_configs.n1_cpu.env: PYTHONPLATLIBDIR: {value!r} {WHY}"


@pytest.mark.parametrize("value", ["lib", "lib64", ""])
def test_a_plain_folder_name_is_judged_under_the_prefix_and_passes(value):
    check_code_paths({"PYTHONPLATLIBDIR": value}, "env")


def test_a_plain_name_is_judged_under_every_prefix_pythonhome_included(tmp_path):
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    judged = _under_prefixes("lib64", {"PYTHONHOME": str(home)}, "env", (str(tmp_path),))
    assert str(home / "lib64") in judged and os.path.join(sys.base_prefix, "lib64") in judged
    assert os.path.join(sys.prefix, "lib64") in judged


def test_pythonexecutable_is_refused_before_python_starts():
    # a short path: the line shows a long value cut (the test's own folder differs in length by worker)
    assert refused({"PYTHONEXECUTABLE": "/opt/py/bin/python"}) == (
        "run_configs.n1_cpu.env: PYTHONEXECUTABLE: Python would take its standard library from the folders above "
        "'/opt/py/bin/python', where it searches for one, code that is not the trainer's and that its "
        "record names by path alone; leave it out")
