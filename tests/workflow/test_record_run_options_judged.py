"""record-run's options judged as planning judges what the pipeline passes: a number of
--resolved-json too large for a float (read as infinity, recorded as null) is refused as NaN
is, naming the key; an --env value that puts code not the trainer's into the run (LD_PRELOAD,
which planning refuses in a run configuration's env) is refused by planning's own check.
One line each, exit status 2, nothing moved or made."""

import subprocess
import sys

import pytest


def _record_run(tmp_path, *options):
    runs = tmp_path / "runs"
    cmd = [sys.executable, "-m", "sacscale.cli", "record-run", "--run-dir", str(runs / "r"), "--work-dir",
           str(runs / ".r.partial"), "--attic", str(tmp_path / "attic"), "--timeout", "60", *options, "--", "true"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert not runs.exists() and not (tmp_path / "attic").exists()
    return proc.stderr.strip()


@pytest.mark.parametrize(("given", "where"), [('{"run": "x", "seed": 1e400}', "seed"),
                                              ('{"run": "x", "sizes": [1, {"lr": -1e999}]}', "sizes[1].lr")])
def test_a_number_read_as_infinity_is_refused_naming_its_key(tmp_path, given, where):
    assert _record_run(tmp_path, "--resolved-json", given) == (
        f"sacscale record-run: error: --resolved-json: {where}: a number too large for a float (JSON readers take "
        "it as infinity, and it would be recorded as null)")


def test_ld_preload_by_hand_is_refused_as_planning_refuses_it(tmp_path):
    assert _record_run(tmp_path, "--env", "LD_PRELOAD=/home/eve/x.so") == (
        "sacscale record-run: error: --env: LD_PRELOAD: the dynamic loader would load '/home/eve/x.so' into every "
        "process of the run, code that is not the trainer's and that its record names by path alone; leave it out")


def test_a_python_path_folder_others_may_write_is_refused(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    assert _record_run(tmp_path, "--env", f"PYTHONPATH={shared}") == (
        f"sacscale record-run: error: --env: PYTHONPATH: '{shared}' is writable by other users without the sticky "
        "bit (mode 0777); Python imports modules from it, so that user's code would run in the run: name a folder "
        "of your own")
