"""Every test gets a lock folder of its own (SACSCALE_LOCK_DIR, inherited by the processes
it starts): the trainer's first-update lock and the pipeline's machine-wide training lock
would otherwise be shared with every other test run, and pipeline, of this user."""

import pytest


@pytest.fixture(autouse=True)
def _private_lock_dir(tmp_path_factory, monkeypatch):
    folder = tmp_path_factory.mktemp("locks")
    folder.chmod(0o700)
    monkeypatch.setenv("SACSCALE_LOCK_DIR", str(folder))
    return folder
