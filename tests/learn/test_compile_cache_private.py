"""torch.compile's code cache is a folder of this user's own: the default one Inductor
picks (`torchinductor_<user>` in the temporary folder) may have been made by another local
user, who could then replace a cached module with code of theirs."""

import os
import tempfile
from pathlib import Path

import pytest

from sacscale.locks import LockError, private_folder


@pytest.fixture
def planted(tmp_path, monkeypatch):
    """Another user's world-writable `torchinductor_victim` where Inductor would look."""
    shared = tmp_path / "shared-tmp"
    folder = shared / "torchinductor_victim"
    folder.mkdir(parents=True)
    folder.chmod(0o777)
    monkeypatch.setenv("TMPDIR", str(shared))
    monkeypatch.setattr(tempfile, "tempdir", None)
    monkeypatch.setenv("USER", "victim")
    monkeypatch.setenv("LOGNAME", "victim")
    monkeypatch.setenv("SACSCALE_LOCK_DIR", str(tmp_path / "locks"))
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    return folder


def test_a_compiled_learner_keeps_its_code_cache_out_of_a_planted_folder(learn, planted, tmp_path, monkeypatch):
    from torch._inductor import codecache
    from torch._inductor.runtime.cache_dir_utils import cache_dir

    for name in ("_HEADER_DIR", "_HEADER_LOCK_DIR"):  # put back after the test
        monkeypatch.setattr(codecache, name, getattr(codecache, name))

    learner = learn.make_learner(learn.small_cfg(compile_on_cpu=True), external=True)
    assert learner.compiled
    used = Path(cache_dir())
    assert used == tmp_path / "locks" / "torchinductor"
    assert used.stat().st_mode & 0o777 == 0o700
    assert Path(codecache._HEADER_DIR).parent == used  # the C++ headers compiled into CPU kernels too
    assert list(planted.iterdir()) == []


def test_a_cache_folder_the_user_named_is_kept(learn, planted, tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "mine"))
    learn.make_learner(learn.small_cfg(compile_on_cpu=True), external=True)
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path / "mine")


@pytest.mark.parametrize("kind", ["link", "open"])
def test_a_private_folder_that_is_a_link_or_open_to_others_is_refused(tmp_path, monkeypatch, kind):
    locks = tmp_path / "locks"
    locks.mkdir(mode=0o700)
    monkeypatch.setenv("SACSCALE_LOCK_DIR", str(locks))
    if kind == "link":
        (tmp_path / "elsewhere").mkdir()
        (locks / "torchinductor").symlink_to(tmp_path / "elsewhere")
    else:
        (locks / "torchinductor").mkdir()
        (locks / "torchinductor").chmod(0o777)
    with pytest.raises(LockError, match=r"folder .*/locks/torchinductor: .*remove it"):
        private_folder("torchinductor")
