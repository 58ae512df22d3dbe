"""The machine's training lock (record-run --machine-lock) on a disk that refuses it. Before: a
full disk exited 1 as `run_training: run R not started: lock file ...: cannot record its holder
(No space left on device)`, the lock folder it made left there; a read-only one exited 2 as
`sacscale record-run: ...`. Now each is what the disk refuses, as every other command's
output: one line `sacscale record-run: run R not started: ...`, exit 2, nothing left."""

import errno
import json
import os
import sys

import pytest

from sacscale import locks
from sacscale.cli import main

MACHINE = "SACSCALE_MACHINE_LOCK_DIR"


def _refusing(monkeypatch, call: str, code: int):
    real = getattr(os, call)

    def refused(*args, **kwargs):
        if call == "mkdir" and "locks" not in os.fsdecode(args[0]):
            return real(*args, **kwargs)
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, call, refused)


@pytest.mark.parametrize("call, code", [("pwrite", errno.ENOSPC), ("mkdir", errno.EROFS)])
def test_a_disk_that_refuses_the_machine_lock_is_one_line_exit_2_leaving_nothing(tmp_path, monkeypatch, capsys,
                                                                                 call, code):
    folder = tmp_path / "disk" / "locks"
    folder.parent.mkdir()
    monkeypatch.setenv(MACHINE, str(folder))
    runs = tmp_path / "results" / "B" / "runs"
    argv = ["record-run", "--run-dir", str(runs / "r7"), "--work-dir", str(runs / ".r7.partial"),
            "--attic", str(tmp_path / "attic"), "--resolved-json", json.dumps({"run": "r7", "run_set": "B", "seed": 1}),
            "--timeout", "60", "--machine-lock", "--", sys.executable, "-c", "pass"]
    _refusing(monkeypatch, call, code)
    status = main(argv)
    monkeypatch.undo()
    err = capsys.readouterr().err
    assert status == 2, err
    [line] = err.strip().splitlines()
    assert line.startswith("sacscale record-run: run r7 not started: ") and os.strerror(code) in line, line
    assert list(folder.parent.iterdir()) == []  # no lock folder, no lock file
    assert not runs.exists() and not (tmp_path / "attic").exists()


def test_a_full_disk_leaves_a_lock_folder_that_was_there_and_no_lock_file(tmp_path, monkeypatch):
    folder = tmp_path / "locks"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv(MACHINE, str(folder))
    _refusing(monkeypatch, "pwrite", errno.ENOSPC)
    with pytest.raises(locks.LockError, match="cannot record its holder"):
        with locks.private_lock("sacscale-training.lock", "this machine's training lock", 0, variable=MACHINE):
            pass
    monkeypatch.undo()
    assert folder.is_dir() and list(folder.iterdir()) == []
