"""An inherited TORCHINDUCTOR_CACHE_DIR. Before: use_private_cache kept any folder the user's
environment named, one another user can write (or owns) and one named through /proc among
them, while the same value in a run's configured env was refused at planning: compiled
kernels were loaded from where another user could put theirs."""

import os

import pytest

from sacscale.learn import compile_cache
from sacscale.locks import LockSettingError

TAIL = ("; torch.compile loads compiled kernels from it, so that user's code would run here: name a folder of "
        "your own, or unset it (a private folder in the lock folder is then used)")


def _given(monkeypatch, folder):
    monkeypatch.setenv(compile_cache.VARIABLE, str(folder))
    with pytest.raises(LockSettingError) as refused:
        compile_cache.use_private_cache()
    assert os.environ[compile_cache.VARIABLE] == str(folder)
    return str(refused.value)


def test_a_cache_others_can_write_is_refused(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    cache.mkdir()
    cache.chmod(0o777)
    assert _given(monkeypatch, cache) == (
        f"TORCHINDUCTOR_CACHE_DIR='{cache}': is writable by other users without the sticky bit (mode 0777){TAIL}")


def test_a_cache_inside_another_users_folder_is_refused(tmp_path, monkeypatch):
    if os.geteuid() != 0:
        pytest.skip("giving a folder to another user needs root")
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, 65534, 65534)
    assert _given(monkeypatch, theirs / "cache") == (
        f"TORCHINDUCTOR_CACHE_DIR='{theirs / 'cache'}': is to be made in {theirs}, which belongs to uid 65534, "
        f"another user{TAIL}")


def test_a_cache_named_through_proc_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert _given(monkeypatch, "/proc/self/cwd/cache") == (
        "TORCHINDUCTOR_CACHE_DIR='/proc/self/cwd/cache' leads through /proc, whose names each process resolves to "
        "its own folders: a different cache in each process; give the folder's own absolute name, or unset it (a "
        "private folder in the lock folder is then used)")


def test_a_cache_of_ones_own_is_kept(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    monkeypatch.setenv(compile_cache.VARIABLE, str(cache))
    compile_cache.use_private_cache()
    assert os.environ[compile_cache.VARIABLE] == str(cache)
