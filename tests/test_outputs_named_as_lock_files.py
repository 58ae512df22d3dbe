"""An output named as a lock file. Before: any command's file output could be given the name
of a live lock (`analyze-run RUN --output DIR/.RUN.trainer-lock`, `--output rr/.R.lock`); its
atomic write replaced the lock file, the holder's flock stayed on the unlinked one, and a
second train (or record-run) then started in the live folder. Now an output (a file or a
folder, any command) named as one of this project's lock files, held or not, is refused in
one line naming it, exit 2, the lock file left as it was; an atomic write at such a name is
refused too, and so is a record-run folder of that name."""

import errno
import os
import subprocess
import sys

import pytest
from cli_runs import REPO, SET, one_line, sacscale

from sacscale.atomic import write_json
from sacscale.commands import BadInput
from sacscale.commands._output_lock import holding_outputs
from sacscale.lock_names import is_lock_name
from sacscale.locks import TRAINER_LOCK, lock_beside

RUN = REPO / "results" / SET / "runs" / "shared_r1_n1_pool7"
NAMED = "is named as a sacscale lock file (held or not), which an output there would replace"


@pytest.mark.parametrize(("name", "lock"), [(".t2.trainer-lock", True), (".R.lock", True), ("..dot.lock", True),
                                            ("sacscale-training.lock", True), ("R.lock", False), (".lock", False),
                                            ("t.json", False), (".R.lock.json", False)])
def test_the_names_of_lock_files(name, lock):
    assert is_lock_name(name) is lock


def test_an_output_at_a_live_trainers_lock_is_refused_and_the_lock_kept(tmp_path):
    run = tmp_path / "t2"
    run.mkdir()
    with lock_beside(run, TRAINER_LOCK) as lock:
        before = os.stat(lock).st_ino
        one_line(sacscale("analyze-run", RUN, "--output", lock),
                 f"error: argument --output: {lock}: .t2.trainer-lock {NAMED}")
        assert os.stat(lock).st_ino == before and lock.read_text().startswith(f"pid {os.getpid()}")


@pytest.mark.parametrize("option", ["--csv", "--json"])
def test_an_output_at_an_unheld_lock_name_is_refused(tmp_path, option):
    names = {"--csv": tmp_path / "s.csv", "--json": tmp_path / "s.json", option: tmp_path / ".R.lock"}
    one_line(sacscale("aggregate", REPO / "results" / SET / "metrics" / "shared_r1_n1_pool7.json",
                      "--csv", names["--csv"], "--json", names["--json"]),
             f"error: argument {option}: {tmp_path / '.R.lock'}: .R.lock {NAMED}")
    assert list(tmp_path.iterdir()) == []


def test_a_folder_output_named_as_a_lock_is_refused(tmp_path):
    one_line(sacscale("prepare-model", "--output-dir", tmp_path / ".W.lock", "--steps", "1"),
             f"error: argument --output-dir: {tmp_path / '.W.lock'}: .W.lock {NAMED}")
    assert list(tmp_path.iterdir()) == []


def test_holding_outputs_refuses_a_lock_name(tmp_path):
    with pytest.raises(BadInput, match=r"^--output .*/\.R\.lock: \.R\.lock is named as a sacscale lock file .*; "
                                       "nothing was written$"):
        with holding_outputs(("--output", tmp_path / ".R.lock")):
            pass
    assert list(tmp_path.iterdir()) == []


def test_an_atomic_write_never_replaces_a_lock_file(tmp_path):
    with lock_beside(tmp_path / "R") as lock:
        with pytest.raises(OSError) as raised:
            write_json(lock, {"a": 1})
        assert raised.value.errno == errno.EINVAL and raised.value.filename == str(lock)
        assert lock.read_text().startswith(f"pid {os.getpid()}")


@pytest.mark.parametrize("option", ["--run-dir", "--work-dir", "--attic", "--state-dir"])
def test_a_record_run_folder_named_as_a_lock_is_refused(tmp_path, option):
    given = {"--run-dir": "R", "--work-dir": "W", "--attic": "att", option: ".R.lock"}
    argv = [arg for key, value in given.items() for arg in (key, str(tmp_path / value))]
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", "record-run", *argv, "--timeout", "10", "--", "true"],
                          capture_output=True, text=True, timeout=120)
    one_line(done, f"error: argument {option}: {tmp_path / '.R.lock'}: .R.lock {NAMED}")
    assert list(tmp_path.iterdir()) == []
