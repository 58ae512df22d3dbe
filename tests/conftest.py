"""The test session gets a lock folder of its own (SACSCALE_LOCK_DIR, inherited by every
process it starts, including those of session- and module-scoped fixtures): the trainer's
first-update lock and the pipeline's machine-wide training lock would otherwise be shared
with every other test session and pipeline of this user on this machine."""

import pytest


@pytest.fixture(autouse=True, scope="session")
def _private_lock_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("locks")
    folder.chmod(0o700)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SACSCALE_LOCK_DIR", str(folder))
        yield folder
