"""The reference environment's interpreter (config `reference.python`) is judged at planning
as a run's code paths are. Before: it was not judged at all, so `reference.python:
/home/eve/evil/python` planned, and reference-env and train-reference started eve's program
as the user running the pipeline (root, on a lab box)."""

import os

import pytest

from sacscale.pipeline.runplan import Host, PlanError, resolve
from tests.workflow.test_config_run_env_any_path import AS_ROOT, PRESETS

H200 = Host(cuda_devices=1, cpus=frozenset(range(16)))
TAIL = "it is started as this user, so another user's code could run as this user: name an interpreter of your own"


def plan(trainer: str, python: str | None):
    config = {"preset": "h200x1", "run_set": "s1", "prefix": "t", "repeats": 1, "order": ["c"],
              "run_configs": {"c": {"trainer": trainer, "devices": "0", "cpu_pools": ["1-15"], "trace": False}}}
    if python is not None:
        config["reference"] = {"python": python}
    return resolve(config, PRESETS, H200)


def refused(python: str | None) -> str:
    with pytest.raises(PlanError) as info:
        plan("unilab", python)
    return str(info.value)


@pytest.fixture
def open_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "open" / "bin"
    path.mkdir(parents=True)
    path.parent.chmod(0o777)
    return path.parent


def test_an_interpreter_in_a_folder_every_user_may_write_is_refused(open_folder):
    python = open_folder / "bin" / "python"
    assert refused(str(python)) == (
        f"reference.python: '{python}' is inside {open_folder}, which is writable by other users without the "
        f"sticky bit (mode 0777); {TAIL}")


def test_a_relative_interpreter_is_judged_from_the_folder_planning_runs_in(open_folder):
    assert refused("open/bin/python").startswith(f"reference.python: '{open_folder}/bin/python' is inside "
                                                 f"{open_folder}, which is writable by other users")


def test_the_default_interpreter_is_judged_too(tmp_path, monkeypatch):
    (tmp_path / ".venv-ref").mkdir(mode=0o777)
    (tmp_path / ".venv-ref").chmod(0o777)
    monkeypatch.chdir(tmp_path)
    assert refused(None).startswith(f"reference.python: '{tmp_path}/.venv-ref/bin/python' is inside "
                                    f"{tmp_path / '.venv-ref'}, which is writable by other users")


def test_a_bare_name_is_judged_as_the_file_path_finds(open_folder, monkeypatch):
    (open_folder / "bin" / "python3x").write_text("#!/bin/sh\n")
    (open_folder / "bin" / "python3x").chmod(0o755)
    monkeypatch.setenv("PATH", f"{open_folder / 'bin'}:{os.environ['PATH']}")
    assert refused("python3x") == (
        f"reference.python: '{open_folder / 'bin' / 'python3x'}' is inside {open_folder}, which is writable by "
        f"other users without the sticky bit (mode 0777); {TAIL}")


def test_an_interpreter_of_ones_own_plans_and_ours_does_not_start_it(open_folder, tmp_path):
    mine = tmp_path / "mine" / "bin"
    mine.mkdir(parents=True)
    plan("unilab", str(mine / "python"))
    plan("sacscale", str(open_folder / "bin" / "python"))  # no reference run: nothing starts it


@AS_ROOT
def test_an_interpreter_of_another_user_is_refused(tmp_path):
    eve = tmp_path / "eve"
    eve.mkdir(mode=0o755)
    (eve / "python").write_text("#!/bin/sh\nid -u >> /tmp/pwned\n")
    (eve / "python").chmod(0o755)
    os.chown(eve, 1001, 1001)
    os.chown(eve / "python", 1001, 1001)
    assert refused(str(eve / "python")) == (
        f"reference.python: '{eve / 'python'}' is inside {eve}, which belongs to uid 1001, another user; {TAIL}")
