"""A lock folder refused for where it stands is not left behind. Before, `_open_private_dir`
made the folder (0700) and only then judged the folders above it: `SACSCALE_MACHINE_LOCK_DIR`
inside a folder other users may write in was refused in one line, but the folder it names
stayed. Now the folder above is judged before anything is made, and a folder made and then
refused (the folder above changed in between) is removed again."""

import pytest

from sacscale import lock_folder, locks

MACHINE = "SACSCALE_MACHINE_LOCK_DIR"


def _open_folder(tmp_path):
    folder = tmp_path / "open"
    folder.mkdir()
    folder.chmod(0o777)  # no sticky bit: anyone may rename what is in it
    return folder


def test_a_machine_lock_folder_in_an_open_folder_is_refused_and_not_made(tmp_path, monkeypatch):
    open_folder = _open_folder(tmp_path)
    monkeypatch.setenv(MACHINE, str(open_folder / "lk"))
    with pytest.raises(locks.LockError) as err:
        with locks.private_lock("train.lock", "the training lock", 0, variable=MACHINE):
            pass
    assert str(err.value) == (f"lock folder {open_folder / 'lk'} is inside {open_folder}, which is writable by "
                              "other users without the sticky bit (mode 0777); another user could plant, hold or "
                              f"swap its files: remove it, or set {MACHINE} to a folder of your own (mode 0700)")
    assert list(open_folder.iterdir()) == []


def test_a_lock_folder_two_levels_below_an_open_folder_is_not_made(tmp_path, monkeypatch):
    mine = _open_folder(tmp_path) / "mine"
    mine.mkdir(mode=0o755)
    monkeypatch.setenv("SACSCALE_LOCK_DIR", str(mine / "locks"))
    with pytest.raises(locks.LockError, match=f"^lock folder {mine / 'locks'} is inside {tmp_path / 'open'}, "):
        locks.private_folder("torchinductor")
    assert list(mine.iterdir()) == []


def test_a_folder_made_then_refused_is_removed(tmp_path, monkeypatch):
    """The folder above judged safe before making and unsafe after (changed in between): the
    folder made is removed again."""
    monkeypatch.setenv("SACSCALE_LOCK_DIR", str(tmp_path / "locks"))
    judged = iter([None, (None, "is writable by other users without the sticky bit (mode 0777)")])
    monkeypatch.setattr(lock_folder, "swappable_by_others", lambda folder, **_: next(judged))
    with pytest.raises(locks.LockError, match=f"^lock folder {tmp_path / 'locks'} is inside {tmp_path}, which is "
                                              "writable by other users"):
        locks.private_folder("torchinductor")
    assert list(tmp_path.iterdir()) == []
