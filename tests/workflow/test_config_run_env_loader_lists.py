"""glibc's loader splits LD_LIBRARY_PATH at ';' as well as ':' (its _dl_init_paths hands
the separators ":;" on). Before: `LD_LIBRARY_PATH: "/usr/lib;/home/eve/lib"` was one path to
the planning judge (one not made yet under root's /usr: it planned), while the loader
searched eve's folder. Now each entry between either separator is judged; a run path
(LD_RUN_PATH) the loader splits at ':' alone."""

import os

import pytest
from run_env_plans import WHERE, plan, refused




def test_a_folder_after_a_semicolon_in_ld_library_path_is_judged(tmp_path):
    open_folder = tmp_path / "open"
    open_folder.mkdir()
    open_folder.chmod(0o777)
    assert refused({"LD_LIBRARY_PATH": f"/usr/lib;{open_folder / 'lib'}"}) == (
        f"{WHERE}: LD_LIBRARY_PATH: '{open_folder / 'lib'}' is inside {open_folder}, which is writable by other "
        "users without the sticky bit (mode 0777); the dynamic loader loads shared libraries from it, so that "
        "user's code would run in the run: name a folder of your own")


@pytest.mark.skipif(os.geteuid() != 0, reason="another user's folder is made by root (chown)")
def test_another_users_folder_after_a_semicolon_is_refused(tmp_path):
    theirs = tmp_path / "eve"
    theirs.mkdir()
    os.chown(theirs, 1001, 1001)
    assert refused({"LD_LIBRARY_PATH": f"/usr/lib;{theirs}"}).startswith(
        f"{WHERE}: LD_LIBRARY_PATH: '{theirs}' belongs to uid 1001, another user; ")


def test_an_empty_entry_between_semicolons_is_the_start_folder(tmp_path, monkeypatch):
    sticky = tmp_path / "stk"
    sticky.mkdir()
    sticky.chmod(0o1777)
    monkeypatch.chdir(sticky)
    assert refused({"LD_LIBRARY_PATH": "/usr/lib;;/usr/lib"}).startswith(f"{WHERE}: LD_LIBRARY_PATH: '{sticky}' ")


def test_ordinary_library_lists_plan():
    env = {"LD_LIBRARY_PATH": "/usr/lib;/usr/lib:/usr/lib", "LD_RUN_PATH": "/usr/lib"}
    assert plan(env).run_configs["n1_cpu"].env == env
