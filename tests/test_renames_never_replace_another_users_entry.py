"""An output's rename never replaces another user's entry, also one that came at its name
after it was judged (in a sticky shared folder root's rename would replace it): a file
written through sacscale.atomic, a completed run renamed into place, a report's folder."""

import errno
import os
from pathlib import Path

import pytest

from sacscale import atomic, no_replace
from sacscale.commands import _report_output
from sacscale.pipeline import completed_run, moves

EVE = 1001
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make another user's entry")


def plant_after_the_last_judgement(monkeypatch, at: Path, plant) -> list[bool]:
    """`plant` (an entry at `at`) run once `armed[0]` is set, right before the rename that
    was to find nothing at `at`: between the owner check and the rename."""
    rename = no_replace.rename_no_replace
    armed = [False]

    def planted_then_renamed(source, target):
        if armed[0] and Path(target) == at:
            armed[0] = False
            plant(at)
        return rename(source, target)

    monkeypatch.setattr(no_replace, "rename_no_replace", planted_then_renamed)
    return armed


def eves_file(path: Path) -> None:
    path.write_text("eve's\n")
    os.chown(path, EVE, EVE)


def eves_folder(path: Path) -> None:
    path.mkdir()
    os.chown(path, EVE, EVE)


@needs_root
def test_a_file_of_another_user_come_between_check_and_rename_is_kept(tmp_path, monkeypatch):
    out = tmp_path / "out.json"
    armed = plant_after_the_last_judgement(monkeypatch, out, eves_file)
    with pytest.raises(PermissionError, match="belongs to uid 1001") as caught:
        with atomic.atomic_path(out) as tmp:
            tmp.write_text("ours\n")
            armed[0] = True
    assert caught.value.filename == str(out)
    assert out.read_text() == "eve's\n" and out.stat().st_uid == EVE
    assert os.listdir(tmp_path) == ["out.json"]  # our temporary removed


def test_our_own_entry_come_meanwhile_is_replaced(tmp_path, monkeypatch):
    out = tmp_path / "out.json"
    armed = plant_after_the_last_judgement(monkeypatch, out, lambda p: p.write_text("ours, earlier\n"))
    with atomic.atomic_path(out) as tmp:
        tmp.write_text("ours\n")
        armed[0] = True
    assert out.read_text() == "ours\n"


@pytest.mark.parametrize("folder", [False, True], ids=["file", "folder"])
def test_the_fallback_without_renameat2_never_replaces(tmp_path, monkeypatch, folder):
    monkeypatch.setattr(no_replace, "_CALL", None)
    source, target = tmp_path / "source", tmp_path / "target"
    source.mkdir() if folder else source.write_text("new\n")
    target.mkdir()
    with pytest.raises(FileExistsError):
        no_replace.rename_no_replace(source, target)
    assert source.exists() and target.is_dir()
    target.rmdir()
    no_replace.rename_no_replace(source, target)
    assert not source.exists() and target.is_dir() == folder


@needs_root
def test_a_completed_run_is_not_renamed_over_another_users_empty_folder(tmp_path):
    work, run_dir = tmp_path / ".runX.partial", tmp_path / "runX"
    work.mkdir()
    (work / "run.json").write_text("{}")
    eves_folder(run_dir)  # made while the run trained
    with pytest.raises(PermissionError) as caught:
        moves.move(work, run_dir)
    assert (work / "run.json").exists() and os.listdir(run_dir) == [] and run_dir.stat().st_uid == EVE
    line, code = completed_run.not_in_place("runX", work, run_dir, caught.value)
    assert code == 2
    assert line.startswith(f"run runX completed, but {run_dir} was made meanwhile and belongs to uid 1001, another "
                           "user (a folder)")
    assert f"the completed run is left in {work}" in line


@needs_root
def test_another_users_folder_come_between_check_and_rename_of_a_run(tmp_path, monkeypatch):
    work, run_dir = tmp_path / ".runX.partial", tmp_path / "runX"
    work.mkdir()
    armed = plant_after_the_last_judgement(monkeypatch, run_dir, eves_folder)
    armed[0] = True
    with pytest.raises(PermissionError):
        moves.move(work, run_dir)
    assert work.is_dir() and run_dir.stat().st_uid == EVE


@needs_root
def test_a_report_folder_another_user_made_while_staging_is_refused(tmp_path):
    folder = tmp_path / "rep"
    with pytest.raises(_report_output.Refused) as caught:
        with _report_output.staged_report(folder, [Path("report.md")], "s") as staging:
            (staging / "report.md").write_text("# report\n")
            eves_folder(folder)
    assert str(caught.value) == (f"{folder}: belongs to uid 1001, another user (a folder), not this user's to write "
                                 "into; write the output elsewhere, or have its owner remove it; nothing was written")
    assert os.listdir(folder) == []  # nothing written into her folder
    assert not [name for name in os.listdir(tmp_path) if ".report-" in name]  # the staging folder removed


@needs_root
def test_a_report_file_another_user_put_between_check_and_rename_is_kept(tmp_path, monkeypatch):
    folder = tmp_path / "rep"
    folder.mkdir()
    armed = plant_after_the_last_judgement(monkeypatch, folder / "report.md", eves_file)
    with pytest.raises(_report_output.Refused, match="belongs to uid 1001"):
        with _report_output.staged_report(folder, [Path("report.md")], "s") as staging:
            (staging / "report.md").write_text("# report\n")
            armed[0] = True
    assert (folder / "report.md").read_text() == "eve's\n"


def test_a_rename_error_other_than_an_entry_there_is_raised(tmp_path):
    with pytest.raises(OSError) as caught:
        no_replace.rename_into_place(tmp_path / "absent", tmp_path / "target")
    assert caught.value.errno == errno.ENOENT
