"""A lock folder setting that names a folder inside a finished run set (its manifest made),
as written or through a link. Before: the folder and its lock file were made there and the
lock file kept (the machine lock's is kept by design), so the set failed verification
(`extra: lk/sacscale-training.lock (not in the manifest)`), while every output option is
refused there. Now the setting is refused in one line naming the variable, the folder and
the set, before anything is made."""

import re
from pathlib import Path

import pytest

from cli_runs import record_run_with_machine_lock
from sacscale.locks import LockSettingError, lock_dir, private_folder


def finished_set(tmp_path: Path) -> Path:
    root = tmp_path / "results" / "S"
    (root / "runs" / "R").mkdir(parents=True)
    (root / "MANIFEST.sha256").write_text("")
    return root


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def refusal(variable: str, folder: Path, inside: str = "results/S") -> str:
    return (f"{variable}='{folder}': lock folder {folder} is inside {inside}, a finished run set (it has "
            f"results/S/MANIFEST.sha256), whose evidence is not added to (a lock file there fails its "
            f"verification); set {variable} to a folder outside it")


@pytest.mark.parametrize("through_a_link", [False, True])
def test_the_machine_lock_folder_inside_a_finished_set_is_refused(tmp_path, through_a_link):
    root = finished_set(tmp_path)
    before = files_under(root)
    if through_a_link:
        (tmp_path / "sl").symlink_to(root / "runs" / "R")
        folder = tmp_path / "sl" / "lk"
    else:
        folder = root / "lk"
    done = record_run_with_machine_lock(tmp_path, {"SACSCALE_MACHINE_LOCK_DIR": str(folder)})
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip() == ("sacscale record-run: run q_r1_n1 not started: "
                                   + refusal("SACSCALE_MACHINE_LOCK_DIR", folder))
    assert files_under(root) == before  # nothing made in the set
    assert not (tmp_path / "elsewhere").exists()


def test_the_private_lock_folder_inside_a_finished_set_is_refused(tmp_path, monkeypatch):
    """SACSCALE_LOCK_DIR also holds the private folders (matplotlib's, the compile cache)."""
    root = finished_set(tmp_path)
    reports = tmp_path / "reports" / "S" / "lk"  # the set's report folder is its evidence too
    for folder, inside in ((root / "lk", "results/S"), (reports, "reports/S")):
        monkeypatch.setenv("SACSCALE_LOCK_DIR", str(folder))
        with pytest.raises(LockSettingError, match=re.escape(refusal("SACSCALE_LOCK_DIR", folder, inside))):
            private_folder("matplotlib")
    assert files_under(root) == ["MANIFEST.sha256", "runs", "runs/R"]
    assert not (tmp_path / "reports").exists()


def test_a_set_being_made_may_hold_it(tmp_path, monkeypatch):
    """Before its manifest a set's folder is the pipeline's to write: no finished set there."""
    folder = tmp_path / "results" / "S" / "lk"
    monkeypatch.setenv("SACSCALE_LOCK_DIR", str(folder))
    assert lock_dir() == folder
