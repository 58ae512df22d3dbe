"""A bare word (no `/`) in a run env variable whose value is only ever a path: Python
(PYTHONPATH), the loader (LD_LIBRARY_PATH) and torch (TORCHINDUCTOR_CACHE_DIR) take it as a
folder in the folder the run starts in. Before: `env: {PYTHONPATH: evecode}` was read as
naming no path, so another user's folder `evecode/` in the checkout planned, and planning's
start check ran her sitecustomize.py as the planner (`./evecode` was refused). Now such a
word is judged as `./evecode`, there already or not (then by the start folder); in a
command's variable (CC, a variable of any other name) a bare word is still no path."""

import os

import pytest
from run_env_plans import WHERE, plan, refused

from sacscale.pipeline.code_paths_env import CODE_PATH_ENV, named_paths

TAIL = "so that user's code would run in the run: name a folder of your own"
AS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="another user's folder is made by root (chown)")


@AS_ROOT
@pytest.mark.parametrize("value", ["evecode", "src:evecode"])
def test_another_users_folder_named_by_a_bare_word_is_refused_and_nothing_of_hers_runs(tmp_path, monkeypatch, value):
    checkout = tmp_path / "check"
    evecode = checkout / "evecode"
    evecode.mkdir(parents=True)
    (checkout / "src").mkdir()
    marker = tmp_path / "planted_code_ran"
    (evecode / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    os.chown(evecode, 1001, 1001)
    os.chown(evecode / "sitecustomize.py", 1001, 1001)
    monkeypatch.chdir(checkout)  # snakemake's working folder, where planning runs and the trainer starts
    assert refused({"PYTHONPATH": value}) == (
        f"{WHERE}: PYTHONPATH: '{evecode}' belongs to uid 1001, another user; {CODE_PATH_ENV['PYTHONPATH']}, {TAIL}")
    assert not marker.exists(), "the planted sitecustomize ran during planning"


@pytest.mark.parametrize("name", ["LD_LIBRARY_PATH", "TORCHINDUCTOR_CACHE_DIR", "PYTHONPATH"])
def test_a_bare_word_naming_a_folder_others_may_write_is_refused(tmp_path, monkeypatch, name):
    (tmp_path / "open").mkdir()
    (tmp_path / "open").chmod(0o777)
    monkeypatch.chdir(tmp_path)
    assert refused({name: "open"}) == (
        f"{WHERE}: {name}: '{tmp_path / 'open'}' is writable by other users without the sticky bit (mode 0777); "
        f"{CODE_PATH_ENV[name]}, {TAIL}")


def test_a_bare_word_naming_nothing_yet_is_judged_by_the_start_folder(tmp_path, monkeypatch):
    start = tmp_path / "start"
    start.mkdir()
    start.chmod(0o777)
    monkeypatch.chdir(start)
    assert refused({"TORCHINDUCTOR_CACHE_DIR": "ind"}) == (
        f"{WHERE}: TORCHINDUCTOR_CACHE_DIR: '{start / 'ind'}' is inside {start}, which is writable by other users "
        f"without the sticky bit (mode 0777); {CODE_PATH_ENV['TORCHINDUCTOR_CACHE_DIR']}, {TAIL}")


def test_ones_own_bare_word_plans_and_a_command_word_is_still_no_path(tmp_path, monkeypatch):
    (tmp_path / "mine").mkdir(mode=0o700)
    monkeypatch.chdir(tmp_path)
    env = {"PYTHONPATH": "mine", "TORCHINDUCTOR_CACHE_DIR": "ind", "LD_LIBRARY_PATH": "mine:/usr/lib"}
    assert plan(env).run_configs["n1_cpu"].env == env
    assert named_paths("mine", start="/a", only_paths=True) == ["/a/mine"]
    assert named_paths("g++", start="/a") == named_paths("INFO", start="/a") == []


@pytest.mark.parametrize("name,value", [("PYTHONPATH", "/usr/lib::/usr/share"), ("LD_LIBRARY_PATH", ":/usr/lib"),
                                        ("PATH", "/usr/bin:")])
def test_an_empty_entry_of_a_path_list_is_the_start_folder_and_judged(tmp_path, monkeypatch, name, value):
    """Python and the loader read an empty entry (`a::b`, `:a`, `a:`) as the folder they
    start in: one others may write is refused as a named one would be."""
    start = tmp_path / "start"
    start.mkdir()
    start.chmod(0o777)
    monkeypatch.chdir(start)
    assert refused({name: value}) == (
        f"{WHERE}: {name}: '{start}' is writable by other users without the sticky bit (mode 0777); "
        f"{CODE_PATH_ENV[name]}, {TAIL}")


def test_an_empty_entry_in_ones_own_start_folder_plans_and_an_empty_value_names_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env = {"PYTHONPATH": "/usr/lib::/usr/lib/x86_64-linux-gnu"}  # not /usr/share: polkitd owns a folder in it
    assert plan(env).run_configs["n1_cpu"].env == env
    assert named_paths("/x::/y", start="/a", only_paths=True) == ["/x", "/a", "/y"]
    assert named_paths("", start="/a", only_paths=True) == []
