"""A run environment's paths that the run takes code from (modules, libraries, compiled
kernels and bytecode in caches) in a folder another user owns or may write. Before:
`env: {PYTHONPATH: /home/eve/evil}` (or PYTHONUSERBASE, TORCHINDUCTOR_CACHE_DIR, ...)
planned, and the runs would import Python or load Inductor's kernels out of eve's folders,
where LD_PRELOAD was refused and a TMPDIR there was judged. Now each path is judged at
planning time, before any interpreter starts with it (these variables with a reason of
their own in the message; any other variable's path: test_config_run_env_any_path.py);
PYTHONBREAKPOINT naming a callable is refused as LD_PRELOAD is."""

import os
import shutil
from pathlib import Path

import pytest
import yaml

from sacscale.pipeline.code_paths_env import CODE_PATH_ENV
from sacscale.pipeline.runplan import Host, PlanError, resolve

PRESETS = yaml.safe_load((Path(__file__).resolve().parents[2] / "workflow" / "presets.yaml").read_text())
CPU_BOX = Host(cuda_devices=0, cpus=frozenset(range(2)))
WHERE = "run_defaults.env"
SACSCALE_FOLDER = os.path.dirname(shutil.which("sacscale"))
CHECKOUT_SRC = Path(__file__).resolve().parents[2] / "src"
AS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="another user's folder, file or link is made by root (chown)")


def plan(env):
    return resolve({"preset": "cpu", "run_defaults": {"env": env}}, PRESETS, CPU_BOX)


def refused(env) -> str:
    with pytest.raises(PlanError) as info:
        plan(env)
    return str(info.value)


def folder(tmp_path, name, mode=0o700, uid=None):
    path = tmp_path / name
    path.mkdir()
    path.chmod(mode)
    if uid is not None:
        os.chown(path, uid, uid)
    return path


def value(name, path):
    return f"{SACSCALE_FOLDER}:{path}" if name == "PATH" else str(path)  # PATH must still hold the trainer


@pytest.mark.parametrize("name", sorted(CODE_PATH_ENV))
def test_a_path_in_a_folder_others_may_write_is_refused(tmp_path, name):
    open_folder = folder(tmp_path, "open", 0o777)
    says = refused({name: value(name, open_folder / "lib")})
    assert says == (f"{WHERE}: {name}: '{open_folder / 'lib'}' is inside {open_folder}, which is writable by other "
                    f"users without the sticky bit (mode 0777); {CODE_PATH_ENV[name]}, so that user's code would run "
                    "in the run: name a folder of your own")


@AS_ROOT
@pytest.mark.parametrize("name", ["PYTHONPATH", "PYTHONUSERBASE", "TORCHINDUCTOR_CACHE_DIR"])
def test_another_users_folder_is_refused(tmp_path, name):
    theirs = folder(tmp_path, "eve", 0o755, uid=1001)
    assert refused({name: str(theirs)}).startswith(f"{WHERE}: {name}: '{theirs}' belongs to uid 1001, another user; ")


@AS_ROOT
def test_another_users_file_or_link_on_the_way_is_refused(tmp_path):
    mine = folder(tmp_path, "mine")
    (mine / "eve.zip").write_bytes(b"PK")
    os.chown(mine / "eve.zip", 1001, 1001)
    assert f"PYTHONPATH: '{mine / 'eve.zip'}' belongs to uid 1001, another user; Python imports modules from it" \
        in refused({"PYTHONPATH": f"{mine / 'eve.zip'}:{mine}"})
    (mine / "link").symlink_to(mine)
    os.lchown(mine / "link", 1001, 1001)
    assert f"TRITON_CACHE_DIR: '{mine / 'link' / 'c'}' is reached through {mine / 'link'}, another user's symbolic " \
        "link (uid 1001)" in refused({"TRITON_CACHE_DIR": str(mine / "link" / "c")})


def test_a_cache_not_made_yet_where_every_user_may_make_it_is_refused(tmp_path):
    shared = folder(tmp_path, "shared", 0o1777)  # as /tmp
    assert refused({"TORCHINDUCTOR_CACHE_DIR": str(shared / "ind")}).startswith(
        f"{WHERE}: TORCHINDUCTOR_CACHE_DIR: '{shared / 'ind'}' is not there yet, and {shared} lets every user make "
        "entries in it (mode 1777): another could make it first; torch.compile loads compiled kernels from it")
    (shared / "ind").mkdir(mode=0o700)  # made first, by this user: the sticky bit keeps it theirs
    plan({"TORCHINDUCTOR_CACHE_DIR": str(shared / "ind")})


def test_no_interpreter_starts_with_a_path_refused(tmp_path):
    open_folder = folder(tmp_path, "open", 0o777)
    (open_folder / "sitecustomize.py").write_text(f"open({str(tmp_path / 'ran')!r}, 'w')")
    assert "PYTHONPATH: " in refused({"PYTHONPATH": str(open_folder), "PYTHONHASHSEED": "0"})
    assert not (tmp_path / "ran").exists()


def test_paths_of_ones_own_or_roots_plan(tmp_path):
    mine = folder(tmp_path, "mine")
    # this checkout's package last: the trainer must import the code its record names
    env = {"PYTHONPATH": f"{mine}::{mine / 'src'}:{CHECKOUT_SRC}", "PYTHONUSERBASE": str(mine / "ub"),
           "TORCHINDUCTOR_CACHE_DIR": str(mine / "ind"), "TRITON_CACHE_DIR": str(mine), "CUDA_CACHE_PATH": str(mine),
           "XDG_CACHE_HOME": str(mine),
           "LD_LIBRARY_PATH": "/usr/local/cuda/lib64", "PATH": f"{SACSCALE_FOLDER}:/usr/bin"}
    assert plan(env).run_configs["n1_cpu"].env == env


def test_a_breakpoint_hook_is_refused_and_the_one_that_turns_it_off_plans():
    assert refused({"PYTHONBREAKPOINT": "os.system"}) == (
        "run_defaults.env: PYTHONBREAKPOINT: Python would import and call 'os.system' at a "
        "breakpoint() anywhere in the run, code that is not the trainer's and that its record names by name alone; "
        "leave it out")
    plan({"PYTHONBREAKPOINT": "0"})


@pytest.mark.parametrize("name, does", [("TRITON_CACHE_MANAGER", "as its kernel cache"),
                                        ("TRITON_REMOTE_CACHE_BACKEND", "as its remote kernel cache")])
def test_a_triton_cache_class_named_by_module_is_refused(name, does):
    """Triton imports the MODULE:CLASS these name, code put into the run by name alone."""
    assert refused({name: "evemod:Cache"}) == (
        f"run_defaults.env: {name}: Triton would import 'evemod:Cache' and run it {does}, code "
        "that is not the trainer's and that its record names by name alone; leave it out")
