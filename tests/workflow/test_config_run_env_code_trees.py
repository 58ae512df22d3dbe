"""A run env's code folders judged to the depth the run loads from them, whatever variable
names them. Before: TRITON_HOME, TORCH_EXTENSIONS_DIR, CUDA_HOME, CPATH, LIBRARY_PATH,
TORCH_HOME and LD_RUN_PATH passed a sticky folder every user may add to (another's
`.triton/cache` in it); a PYTHONPATH folder was judged one level deep, so a package
`sitecustomize/` holding an `__init__.py` every user may write passed; and an entry that was
a link to a sticky folder every user may add to passed, judged as an output path. Now each is
a code folder, every entry below one is judged (a bounded walk, more refused as too large),
and a link, as an entry or as the folder, is judged where it leads, as a code folder."""

import os
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from sacscale.pipeline import code_folders
from sacscale.pipeline.code_paths_env import CODE_PATH_ENV
from sacscale.pipeline.runplan import Host, PlanError, resolve

REPO = Path(__file__).resolve().parents[2]
PRESETS = yaml.safe_load((REPO / "workflow" / "presets.yaml").read_text())
CPU_BOX = Host(cuda_devices=0, cpus=frozenset(range(2)))
WHERE = "run_defaults.env"
TAIL = "so that user's code would run in the run: name a folder of your own"
PYTHON = "Python imports modules from it"
ADDS = ("lets every user make entries in it (mode 1777), whatever the sticky bit: another could add a module, "
        "library or command beside those the run takes from it")
NEWLY_CODE_FOLDERS = ["TRITON_HOME", "TORCH_EXTENSIONS_DIR", "CUDA_HOME", "CUDA_PATH", "CPATH", "C_INCLUDE_PATH",
                      "CPLUS_INCLUDE_PATH", "LIBRARY_PATH", "TORCH_HOME", "LD_RUN_PATH", "PYTHONHOME", "HF_HOME",
                      "CUDNN_HOME", "CUDA_INC_PATH"]


def plan(env):
    return resolve({"preset": "cpu", "run_defaults": {"env": env}}, PRESETS, CPU_BOX)


def refused(env) -> str:
    with pytest.raises(PlanError) as info:
        plan(env)
    return str(info.value)


def folder(parent, name, mode=0o755):
    path = parent / name
    path.mkdir(parents=True)
    path.chmod(mode)
    return path


def open_file(parent, name):
    path = parent / name
    path.write_text("")
    path.chmod(0o666)
    return path


@pytest.mark.parametrize("name", NEWLY_CODE_FOLDERS)
def test_a_sticky_folder_every_user_may_add_to_is_refused_for_each_code_folder_variable(tmp_path, name):
    sticky = folder(tmp_path, "stk", 0o1777)
    folder(sticky, ".triton/cache", 0o755)
    assert refused({name: str(sticky)}) == f"{WHERE}: {name}: '{sticky}' {ADDS}; {CODE_PATH_ENV[name]}, {TAIL}"


def test_a_package_init_every_user_may_write_is_refused(tmp_path):
    pp = folder(tmp_path, "pp")
    open_file(folder(pp, "sitecustomize"), "__init__.py")
    assert refused({"PYTHONPATH": str(pp)}) == (
        f"{WHERE}: PYTHONPATH: '{pp}' holds 'sitecustomize/__init__.py', which is writable by other users "
        f"(mode 0666); {PYTHON}, {TAIL}")


def test_a_module_deep_in_a_package_of_another_user_is_refused(tmp_path):
    pp = folder(tmp_path, "pp")
    deep = folder(pp, "pkg/sub/inner")
    os.chown(deep, 4242, -1)
    assert refused({"PYTHONPATH": str(pp)}) == (
        f"{WHERE}: PYTHONPATH: '{pp}' holds 'pkg/sub/inner', which belongs to uid 4242, another user; {PYTHON}, {TAIL}")


def test_a_header_deep_in_a_cpath_folder_every_user_may_write_is_refused(tmp_path):
    include = folder(tmp_path, "include")
    open_file(folder(include, "sys"), "types.h")
    assert refused({"CPATH": str(include)}).startswith(
        f"{WHERE}: CPATH: '{include}' holds 'sys/types.h', which is writable by other users (mode 0666); ")


def test_an_entry_linked_to_a_sticky_folder_is_judged_as_a_code_folder(tmp_path):
    pp = folder(tmp_path, "pp")
    sticky = folder(tmp_path, "stk2", 0o1777)
    (pp / "sitecustomize").symlink_to(sticky)
    assert refused({"PYTHONPATH": str(pp)}) == (
        f"{WHERE}: PYTHONPATH: '{pp}' holds 'sitecustomize', which leads to {sticky}, which {ADDS}; {PYTHON}, {TAIL}")


def test_what_a_linked_entry_leads_to_is_walked_and_named_as_the_run_reaches_it(tmp_path):
    pp = folder(tmp_path, "pp")
    elsewhere = folder(tmp_path, "elsewhere")
    open_file(elsewhere, "__init__.py")
    (pp / "sitecustomize").symlink_to(elsewhere)
    link = tmp_path / "pp_link"
    link.symlink_to(pp)  # the code folder itself named through a link
    assert refused({"PYTHONPATH": str(link)}) == (
        f"{WHERE}: PYTHONPATH: '{link}' leads to {pp}, which holds 'sitecustomize/__init__.py', which is writable by "
        f"other users (mode 0666); {PYTHON}, {TAIL}")


def test_a_folder_too_large_to_walk_is_refused_by_name(tmp_path, monkeypatch):
    pp = folder(tmp_path, "pp")
    for n in range(6):
        (pp / f"m{n}.py").write_text("")
    monkeypatch.setattr(code_folders, "MAX_JUDGED_ENTRIES", 5)
    assert refused({"PYTHONPATH": str(pp)}) == (
        f"{WHERE}: PYTHONPATH: '{pp}' holds more than 5 entries below it (links followed), too large for planning to "
        f"judge what the run may load from it: name a smaller folder; {PYTHON}, {TAIL}")


def test_the_loader_and_path_folders_are_judged_where_they_load_from(tmp_path):
    lib = folder(tmp_path, "lib")
    open_file(folder(lib, "python3/dist-packages"), "x.py")  # never run through PATH
    plan({"PATH": f"{lib}:{os.path.dirname(shutil.which('sacscale'))}:/usr/bin:/bin"})
    # the loader's subfolders differ by processor and glibc: a library folder is judged whole
    assert refused({"LD_LIBRARY_PATH": str(lib)}).startswith(
        f"{WHERE}: LD_LIBRARY_PATH: '{lib}' holds 'python3/dist-packages/x.py', which is writable by other users")
    shutil.rmtree(lib / "python3")
    open_file(folder(lib, "glibc-hwcaps/x86-64-v3"), "libx.so")
    assert refused({"LD_LIBRARY_PATH": str(lib)}).startswith(
        f"{WHERE}: LD_LIBRARY_PATH: '{lib}' holds 'glibc-hwcaps/x86-64-v3/libx.so', which is writable by other users")


def test_home_is_judged_by_the_caches_below_it_and_keeps_a_scratch_link(tmp_path):
    home = folder(tmp_path, "home", 0o700)
    (home / "scratch").symlink_to(folder(tmp_path, "stk", 0o1777))
    plan({"HOME": str(home)})
    cache = folder(home, ".triton/cache/abc")
    open_file(cache, "kernel.so")
    assert refused({"HOME": str(home)}).startswith(
        f"{WHERE}: HOME: '{home / '.triton'}' holds 'cache/abc/kernel.so', which is writable by other users (mode "
        "0666); libraries keep their default caches under it")


def test_ordinary_values_plan():
    venv_bin = os.path.dirname(sys.executable)
    libraries = ":".join(p for p in ("/usr/lib", "/usr/local/cuda/lib64") if os.path.isdir(p))
    env = {"PYTHONPATH": "src", "LD_LIBRARY_PATH": libraries, "PATH": f"{venv_bin}:/usr/local/bin:/usr/bin:/bin",
           "CPATH": "/usr/include", "LIBRARY_PATH": "/usr/lib/x86_64-linux-gnu"}
    if os.path.isdir("/usr/local/cuda"):
        env["CUDA_HOME"] = "/usr/local/cuda"
    assert plan(env).run_configs["n1_cpu"].env == env


def test_the_schema_states_the_walks_bound():
    description = (REPO / "workflow" / "schemas" / "config.schema.yaml").read_text()
    assert f"more than {code_folders.MAX_JUDGED_ENTRIES} entries below it is refused as too large" in description
