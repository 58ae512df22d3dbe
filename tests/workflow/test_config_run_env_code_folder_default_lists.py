"""A folder deep in a run env's code folder judged by its default access list too. Before,
the walk judged each entry's mode and access list only: a package folder below a PYTHONPATH
entry whose default list gave another user write planned, Python then made `__pycache__/`
there at the run's first import, which inherited her write, and she swapped the bytecode the
next import ran. Now every folder the walk looks into is refused when its default list gives
write to anyone but the runner and root, as the named folder and those above it were."""

import os

from access_lists import default_for, set_list, unknown_uid
from run_env_plans import WHERE, plan, refused

TAIL = "so that user's code would run in the run: name a folder of your own"
PYTHON = "Python imports modules from it"
INHERITED = ("has a default access control list (getfacl shows it, setfacl -k removes it) that lets uid {} "
             "(not known here) write every entry made in it")


def _package(root, *parts):
    folder = root.joinpath(*parts)
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("x = 1\n")
    return folder


def test_a_package_folder_whose_default_list_gives_another_user_write_is_refused(tmp_path):
    pp = tmp_path / "pp"
    package = _package(pp, "pkg")
    plan({"PYTHONPATH": str(pp)})
    uid = unknown_uid()
    set_list(str(package), "default", *default_for(uid))
    assert refused({"PYTHONPATH": str(pp)}) == (
        f"{WHERE}: PYTHONPATH: '{pp}' holds 'pkg', which {INHERITED.format(uid)}; {PYTHON}, {TAIL}")


def test_a_default_list_deep_in_the_tree_is_named_where_it_is(tmp_path):
    pp = tmp_path / "pp"
    inner = _package(pp, "pkg", "sub", "inner")
    uid = unknown_uid()
    set_list(str(inner), "default", *default_for(uid))
    assert refused({"PYTHONPATH": str(pp)}) == (
        f"{WHERE}: PYTHONPATH: '{pp}' holds 'pkg/sub/inner', which {INHERITED.format(uid)}; {PYTHON}, {TAIL}")


def test_a_folder_reached_through_a_link_is_judged_by_its_default_list(tmp_path):
    pp = tmp_path / "pp"
    pp.mkdir()
    real = _package(tmp_path, "elsewhere", "real")
    (pp / "a").symlink_to(real.parent)  # walked before 'pkg': the link then leads into a folder being walked
    (pp / "pkg").symlink_to(real)
    uid = unknown_uid()
    set_list(str(real), "default", *default_for(uid))
    assert refused({"PYTHONPATH": str(pp)}) == (
        f"{WHERE}: PYTHONPATH: '{pp}' holds 'pkg', which leads to {real}, which {INHERITED.format(uid)}; {PYTHON}, "
        f"{TAIL}")


def test_a_default_list_that_gives_no_write_plans(tmp_path):
    pp = tmp_path / "pp"
    package = _package(pp, "pkg")
    set_list(str(package), "default", *default_for(unknown_uid(), perm=5))
    assert plan({"PYTHONPATH": str(pp)}).run_configs["n1_cpu"].env == {"PYTHONPATH": str(pp)}


def test_a_cache_folder_the_run_makes_below_home_is_judged_by_the_folder_it_is_made_in(tmp_path):
    home = tmp_path / "home"
    cache = home / ".cache"
    cache.mkdir(parents=True)
    os.chmod(home, 0o700)
    plan({"HOME": str(home)})
    uid = unknown_uid()
    set_list(str(cache), "default", *default_for(uid))  # .cache/torch, made by the run, would inherit it
    assert refused({"HOME": str(home)}).startswith(
        f"{WHERE}: HOME: '{home / '.cache/torch'}' is inside {cache}, which {INHERITED.format(uid)}; ")
