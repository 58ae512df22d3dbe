"""PYTHONHOME judged where Python reads its standard library with the run's PYTHONPLATLIBDIR,
and PYTHONPLATLIBDIR judged by what it selects. Before, only `<PYTHONHOME>/lib/python3.X` was
judged, but PYTHONPLATLIBDIR=lib64 makes Python import its standard library from
`<PYTHONHOME>/lib64/python3.X` (and its zip from `<PYTHONHOME>/lib64`): a `sitecustomize.py`
every user may write there planned and ran as the run's user. PYTHONPLATLIBDIR alone moves
the interpreter's own standard library and site-packages likewise (`<prefix>/lib64/...`),
and was judged as a path only. Now both are judged as code folders where Python reads them."""

import os
import sys

from run_env_plans import WHERE, plan, refused

from sacscale.pipeline.code_paths_env import check_code_paths
from sacscale.pipeline.plan_values import PlanError

TAIL = "so that user's code would run in the run: name a folder of your own"
VERSION = f"python{sys.version_info.major}.{sys.version_info.minor}"
ZIP = f"python{sys.version_info.major}{sys.version_info.minor}.zip"
WRITABLE = "which is writable by other users (mode 0666)"


def _open_file(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("")
    path.chmod(0o666)


def _linked_standard_library(home, libdir):
    """A PYTHONHOME whose `<libdir>/python3.X` is links to this Python's standard library."""
    stdlib = home / libdir / VERSION
    stdlib.mkdir(parents=True)
    for entry in os.scandir(os.path.dirname(os.__file__)):
        if entry.name not in ("site-packages", "sitecustomize.py", "__pycache__"):
            (stdlib / entry.name).symlink_to(entry.path)


def test_the_standard_library_under_the_runs_platlibdir_is_judged(tmp_path):
    home = tmp_path / "ph"
    _open_file(home / "lib64" / VERSION / "sitecustomize.py")
    assert refused({"PYTHONHOME": str(home), "PYTHONPLATLIBDIR": "lib64"}) == (
        f"{WHERE}: PYTHONHOME: '{home / 'lib64'}' holds '{VERSION}/sitecustomize.py', {WRITABLE}; Python imports "
        f"its standard library from it, {TAIL}")


def test_the_zipped_standard_library_beside_it_is_judged(tmp_path):
    home = tmp_path / "ph"
    (home / "lib64" / VERSION).mkdir(parents=True)
    _open_file(home / "lib64" / ZIP)
    assert refused({"PYTHONHOME": str(home), "PYTHONPLATLIBDIR": "lib64"}) == (
        f"{WHERE}: PYTHONHOME: '{home / 'lib64'}' holds '{ZIP}', {WRITABLE}; Python imports its standard library "
        f"from it, {TAIL}")


def test_platlibdir_alone_is_judged_as_a_code_folder_under_the_interpreters_prefix(tmp_path, monkeypatch):
    prefix = tmp_path / "venv"
    _open_file(prefix / "lib64" / VERSION / "site-packages" / "evil.pth")
    monkeypatch.setattr(sys, "prefix", str(prefix))
    try:
        check_code_paths({"PYTHONPLATLIBDIR": "lib64"}, "env")
    except PlanError as exc:
        message = str(exc)
    else:
        raise AssertionError("planned")
    assert message == (
        f"env: PYTHONPLATLIBDIR: '{prefix / 'lib64'}' holds '{VERSION}/site-packages/evil.pth', {WRITABLE}; Python "
        f"imports its standard library and site-packages from <prefix>/lib64/python3.X, {TAIL}")


def test_a_home_of_ones_own_with_a_platlibdir_plans_and_python_starts(tmp_path):
    home = tmp_path / "ph"
    _linked_standard_library(home, "lib64")
    env = {"PYTHONHOME": str(home), "PYTHONPLATLIBDIR": "lib64"}
    assert plan(env).run_configs["n1_cpu"].env == env


def test_the_interpreters_own_home_plans():
    env = {"PYTHONHOME": sys.base_prefix}
    assert plan(env).run_configs["n1_cpu"].env == env
