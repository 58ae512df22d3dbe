"""The default lock folder (docs/faults.md row 27).
Before, it lay in TMPDIR's folder: two pipeline invocations in one checkout from shells
with different TMPDIRs (a batch job's own, tmux's) held two training locks and trained at
once, each set measuring against the other's load."""

import os
from pathlib import Path

from sacscale.locks import lock_dir


def test_the_default_folder_does_not_follow_tmpdir(monkeypatch, tmp_path):
    monkeypatch.delenv("SACSCALE_LOCK_DIR", raising=False)
    seen = set()
    for tmpdir in (tmp_path / "a", tmp_path / "b"):
        monkeypatch.setenv("TMPDIR", str(tmpdir))
        import tempfile

        monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
        seen.add(lock_dir())
    assert seen == {Path("/tmp") / f"sacscale-{os.getuid()}"}
