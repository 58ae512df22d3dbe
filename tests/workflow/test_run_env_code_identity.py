"""A run's env that would have its trainer run code other than the code its record names.
Before: a run env PYTHONPYCACHEPREFIX (one's own folder holding bytecode compiled from other
code, header matching) planned while verify-env judged only its own cache, and a run env
PYTHONPATH holding another copy of the sacscale package planned while record-run recorded
its own process's code: the trainer imported the other copy."""

from test_config_run_env_code_paths import CHECKOUT_SRC, WHERE, folder, plan, refused


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
