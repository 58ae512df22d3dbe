"""A run env's code files and code folders judged by who may write them, not only by their
owner. Before: a file of root's that every user may write (mode 0777, or an access-list
line for another user) passed as TRITON_PTXAS_PATH or CC; a PYTHONPATH folder of root's was
judged alone, not the world-writable `sitecustomize.py` it held; and a folder with the sticky
bit that every user may add entries to (/tmp itself) passed as PYTHONPATH, where another user
then added a `sitecustomize.py` that ran in the run. Now a file is judged by its mode and
access list too, a folder the run takes code from (CODE_PATH_ENV) must take no new entries
from others, sticky bit or not, and each entry directly in it is judged."""

import os
import shutil
import stat
import sys
from pathlib import Path

import pytest
import yaml
from access_lists import GROUP_OBJ, MASK, OTHER, USER, USER_OBJ, entry, set_list, unknown_uid

from sacscale.pipeline.runplan import Host, PlanError, resolve

REPO = Path(__file__).resolve().parents[2]
PRESETS = yaml.safe_load((REPO / "workflow" / "presets.yaml").read_text())
CPU_BOX = Host(cuda_devices=0, cpus=frozenset(range(2)))
WHERE = "run_defaults.env"
TAIL = "so that user's code would run in the run: name a folder of your own"
PYTHON = "Python imports modules from it"
ADDS = ("lets every user make entries in it (mode 1777), whatever the sticky bit: another could add a module, "
        "library or command beside those the run takes from it")
SACSCALE_FOLDER = os.path.dirname(shutil.which("sacscale"))


def plan(env):
    return resolve({"preset": "cpu", "run_defaults": {"env": env}}, PRESETS, CPU_BOX)


def refused(env) -> str:
    with pytest.raises(PlanError) as info:
        plan(env)
    return str(info.value)


def folder(parent, name, mode=0o755):
    path = parent / name
    path.mkdir()
    path.chmod(mode)
    return path


def program(parent, name, mode):
    path = parent / name
    path.write_text("#!/bin/sh\n")
    path.chmod(mode)
    return path


def test_a_program_every_user_may_write_is_refused(tmp_path):
    ptxas = program(folder(tmp_path, "rf"), "ptxas", 0o777)
    assert refused({"TRITON_PTXAS_PATH": str(ptxas)}) == (
        f"{WHERE}: TRITON_PTXAS_PATH: '{ptxas}' is writable by other users (mode 0777); Triton runs it as its PTX "
        f"assembler, {TAIL}")


def test_a_compiler_whose_access_list_lets_another_user_write_it_is_refused(tmp_path):
    cc = program(folder(tmp_path, "rf"), "cc", 0o755)
    uid = unknown_uid()
    set_list(str(cc), "access", entry(USER_OBJ, 7), entry(USER, 7, uid), entry(GROUP_OBJ, 5), entry(MASK, 7),
             entry(OTHER, 5))
    assert refused({"CC": str(cc)}) == (
        f"{WHERE}: CC: '{cc}' has an access control list (getfacl shows it, setfacl -b removes it) that lets uid "
        f"{uid} (not known here) write it; torch.compile and Triton start it as their C compiler, {TAIL}")


def test_a_module_every_user_may_write_in_a_python_path_folder_is_refused(tmp_path):
    pp = folder(tmp_path, "pp")
    (pp / "sitecustomize.py").write_text("")
    (pp / "sitecustomize.py").chmod(0o666)
    assert refused({"PYTHONPATH": str(pp)}) == (
        f"{WHERE}: PYTHONPATH: '{pp}' holds 'sitecustomize.py', which is writable by other users (mode 0666); "
        f"{PYTHON}, {TAIL}")


def test_a_package_folder_every_user_may_add_to_is_refused(tmp_path):
    pp = folder(tmp_path, "pp")
    folder(pp, "pkg", 0o1777)
    assert refused({"PYTHONPATH": str(pp)}) == (
        f"{WHERE}: PYTHONPATH: '{pp}' holds 'pkg', which is writable by other users (mode 1777); {PYTHON}, {TAIL}")


def test_a_library_linked_from_a_folder_others_may_write_is_refused(tmp_path):
    lib = folder(tmp_path, "lib")
    open_folder = folder(tmp_path, "open", 0o777)
    (open_folder / "libx.so").write_bytes(b"")
    (lib / "libx.so").symlink_to(open_folder / "libx.so")
    assert refused({"LD_LIBRARY_PATH": str(lib)}) == (
        f"{WHERE}: LD_LIBRARY_PATH: '{lib}' holds 'libx.so', which leads to {open_folder / 'libx.so'}, inside "
        f"{open_folder}, which is writable by other users without the sticky bit (mode 0777); the dynamic loader "
        f"loads shared libraries from it, {TAIL}")


def test_a_sticky_folder_every_user_may_add_to_is_refused_as_a_code_folder(tmp_path):
    sticky = folder(tmp_path, "stk", 0o1777)
    assert refused({"PYTHONPATH": str(sticky)}) == f"{WHERE}: PYTHONPATH: '{sticky}' {ADDS}; {PYTHON}, {TAIL}"
    assert refused({"TRITON_CACHE_DIR": str(sticky)}).startswith(f"{WHERE}: TRITON_CACHE_DIR: '{sticky}' {ADDS}; ")


@pytest.mark.skipif(stat.S_IMODE(os.stat("/tmp").st_mode) != 0o1777, reason="/tmp is not the usual 1777 folder")
def test_tmp_itself_is_refused_as_a_code_folder():
    assert refused({"PYTHONPATH": "/tmp"}) == f"{WHERE}: PYTHONPATH: '/tmp' {ADDS}; {PYTHON}, {TAIL}"


def test_an_empty_entry_where_the_run_starts_in_a_sticky_folder_is_refused(tmp_path, monkeypatch):
    sticky = folder(tmp_path, "stk", 0o1777)
    mine = folder(tmp_path, "mine")
    monkeypatch.chdir(sticky)
    assert refused({"PYTHONPATH": f"{mine}::{mine}"}) == f"{WHERE}: PYTHONPATH: '{sticky}' {ADDS}; {PYTHON}, {TAIL}"


def test_a_cache_of_ones_own_made_in_a_sticky_folder_plans(tmp_path):
    sticky = folder(tmp_path, "stk", 0o1777)
    (sticky / "ind").mkdir(mode=0o700)  # made by this user: the sticky bit keeps it theirs
    (sticky / "err.json").write_text("")  # a file the run writes, there already and its own
    plan({"TORCHINDUCTOR_CACHE_DIR": str(sticky / "ind"), "TORCHELASTIC_ERROR_FILE": str(sticky / "err.json")})


def test_ordinary_code_folders_and_files_plan(tmp_path):
    mine = folder(tmp_path, "mine", 0o700)
    program(mine, "tool", 0o755)
    (mine / "lib.so").symlink_to("/usr/lib")
    libraries = ":".join(p for p in ("/usr/lib", "/usr/lib/x86_64-linux-gnu", "/usr/local/cuda/lib64")
                         if os.path.isdir(p))
    env = {"PYTHONPATH": f"{REPO / 'src'}:{mine}", "LD_LIBRARY_PATH": libraries,
           "PATH": f"{SACSCALE_FOLDER}:{os.path.dirname(sys.executable)}:/usr/local/bin:/usr/bin:/bin",
           "TRITON_PTXAS_PATH": str(mine / "tool"), "CC": "/usr/bin/gcc", "TRITON_CACHE_DIR": str(mine)}
    assert plan(env).run_configs["n1_cpu"].env == env
