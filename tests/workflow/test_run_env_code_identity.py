"""A run's env that would have its trainer run code other than the code its record names.
Before: a run env PYTHONPYCACHEPREFIX (one's own folder holding bytecode compiled from other
code, header matching) planned while verify-env judged only its own cache, and a run env
PYTHONPATH holding another copy of the sacscale package planned while record-run recorded
its own process's code: the trainer imported the other copy; and a run env PATH whose first
`sacscale` was another copy's console script planned (only "PATH holds sacscale" was checked)."""

import os
import shutil

from test_config_run_env_code_paths import CHECKOUT_SRC, SACSCALE_FOLDER, WHERE, folder, plan, refused

OWN_SACSCALE = os.path.realpath(shutil.which("sacscale"))


def test_a_run_env_bytecode_prefix_is_refused_even_ones_own(tmp_path):
    mine = folder(tmp_path, "pyc")
    assert refused({"PYTHONPYCACHEPREFIX": str(mine)}) == (
        f"{WHERE}: PYTHONPYCACHEPREFIX: the run's Python would load the package's compiled bytecode from "
        f"'{mine}', which verify-env does not judge: bytecode compiled from other code there would run while the "
        "record names this checkout's; leave it out, or export it where snakemake runs (verify-env judges that one)")


def test_a_run_env_import_path_holding_another_sacscale_is_refused(tmp_path):
    other = folder(tmp_path, "other")
    (other / "sacscale").mkdir()
    (other / "sacscale" / "__init__.py").write_text(f"open({str(tmp_path / 'ran')!r}, 'w')\n")
    said = refused({"PYTHONPATH": str(other)})
    assert said.startswith(f"{WHERE}: PYTHONPATH: the trainer started with them imports sacscale from "
                           f"'{other / 'sacscale'}', not this checkout's '{CHECKOUT_SRC / 'sacscale'}'"), said
    assert not (tmp_path / "ran").exists()  # found, never imported


def test_a_run_env_import_path_leading_to_this_checkout_plans(tmp_path):
    mine = folder(tmp_path, "mine")
    value = f"{mine}:{CHECKOUT_SRC}"
    assert plan({"PYTHONPATH": value}).run_configs["n1_cpu"].env == {"PYTHONPATH": value}


def test_a_run_env_path_finding_another_copys_sacscale_first_is_refused(tmp_path):
    other = folder(tmp_path, "otherbin")
    (other / "sacscale").write_text("#!/bin/sh\nexit 0\n")
    (other / "sacscale").chmod(0o755)
    path = f"{other}:{SACSCALE_FOLDER}:/usr/bin:/bin"
    assert refused({"PATH": path}) == (
        f"{WHERE}: PATH {path[:80]!r} finds 'sacscale', the trainer's command, at '{other / 'sacscale'}', not this "
        f"environment's '{OWN_SACSCALE}': the run would start that copy while its record names this checkout's "
        "code; leave PATH out or put this environment's folder first")


def test_a_run_env_path_finding_this_environments_sacscale_plans(tmp_path):
    linked = folder(tmp_path, "linkbin")
    (linked / "sacscale").symlink_to(OWN_SACSCALE)  # the same script, through a link
    for path in (f"{SACSCALE_FOLDER}:/usr/bin:/bin", f"{linked}:/usr/bin:/bin"):
        assert plan({"PATH": path}).run_configs["n1_cpu"].env == {"PATH": path}
