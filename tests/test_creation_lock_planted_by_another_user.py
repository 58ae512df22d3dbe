"""The creation lock of an environment (`.<venv>.lock` beside it) and the lock of a run
folder, held through a file another user owns or may write. Before: train-reference and
reference-env refused on her word, showing the holder her file named (`pid 1 holds ...`,
for as long as she held it). Now such a file is never taken as a holder's word: the refusal
names it as another user's file at the lock's name (or one others may write) and shows
nothing it holds."""

import contextlib
import fcntl
import os

import pytest

from sacscale.cli import main

pytestmark = pytest.mark.skipif(os.getuid() != 0, reason="giving a file to another user needs root")

UNTRUSTED = ("it is held, but not as a lock of this user's sacscale, and what it says of its holder is not shown "
             "(another user could have written it)")


@contextlib.contextmanager
def held(lock, uid=1001, mode=0o644, text=b"pid 1 (init, on this machine)\n"):
    """A lock file planted and held, as another user's process would hold it."""
    lock.write_bytes(text)
    os.chown(lock, uid, uid)
    lock.chmod(mode)
    fd = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield lock
    finally:
        os.close(fd)


def environment(tmp_path):
    shared = tmp_path / "stk"
    shared.mkdir()
    shared.chmod(0o1777)  # as /tmp: every user may make entries in it
    python = shared / "rvok" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_bytes(b"\x7fELF")
    return python, shared / ".rvok.lock"


def says(lock, problem="belongs to uid 1001, another user, who put it in a folder they can write in"):
    return f"lock file {lock}: {problem}; {UNTRUSTED}; keep rvok in a folder of your own"


def test_train_reference_names_another_users_lock_file(tmp_path, capsys):
    python, lock = environment(tmp_path)
    with held(lock):
        code = main(["train-reference", "--devices", "0", "--num-envs", "4", "--iterations", "1", "--log-dir",
                     str(tmp_path / "tr"), "--reference-python", str(python)])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err == f"sacscale train-reference: error: --reference-python {python}: {says(lock)}; nothing was started"
    assert "pid 1" not in err
    assert not (tmp_path / "tr").exists()


def test_reference_env_names_another_users_lock_file(tmp_path, capsys):
    python, lock = environment(tmp_path)
    with held(lock):
        code = main(["reference-env", "--python", str(python), "--output", str(tmp_path / "re.json")])
    assert code == 2
    assert capsys.readouterr().err.strip() == (
        f"sacscale reference-env: error: --python {python}: {says(lock)}; nothing was read")
    assert not (tmp_path / "re.json").exists()


def test_a_lock_file_of_this_user_others_may_write_is_no_holders_word(tmp_path, capsys):
    python, lock = environment(tmp_path)
    with held(lock, uid=0, mode=0o666):
        code = main(["reference-env", "--python", str(python), "--output", str(tmp_path / "re.json")])
    assert code == 2
    assert capsys.readouterr().err.strip() == (
        f"sacscale reference-env: error: --python {python}: "
        f"{says(lock, 'is writable by other users (mode 0666)')}; nothing was read")


def test_a_log_dir_inside_a_folder_locked_by_another_users_file(tmp_path, capsys):
    shared = tmp_path / "stk"
    shared.mkdir()
    shared.chmod(0o1777)
    (shared / "run").mkdir()
    log_dir = shared / "run" / "new"
    lock = shared / ".run.trainer-lock"
    with held(lock):
        code = main(["train", "--devices", "cpu", "--num-envs", "4", "--batch-size", "4", "--iterations", "2",
                     "--log-dir", str(log_dir)])
    assert code == 2  # as train's other refusals of a held run folder
    err = capsys.readouterr().err.strip()
    assert err == (f"sacscale train: error: --log-dir {log_dir}: lock file {lock}: belongs to uid 1001, another user, "
                   f"who put it in a folder they can write in; {UNTRUSTED}; keep run in a folder of your own")
    assert not log_dir.exists()


def test_a_lock_file_of_this_user_still_names_its_holder(tmp_path, capsys):
    python, lock = environment(tmp_path)
    with held(lock, uid=0, mode=0o600, text=b"pid 4242\n"):
        code = main(["reference-env", "--python", str(python), "--output", str(tmp_path / "re.json")])
    assert code == 2
    assert capsys.readouterr().err.strip() == (
        f"sacscale reference-env: error: --python {python}: another sacscale command is creating this environment "
        f"(pid 4242 holds {lock}); nothing was read: run this one once it has finished")
