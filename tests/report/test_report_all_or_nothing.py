"""`sacscale report` writes its whole report or nothing. A folder at report.html was found
only after report.md, numbers.json and the figures had been replaced, which stayed so; a
report failing part way removed every file new in the folder, another report's too (two
reports into one folder at once: the other's figures and folder went). Now the report is
staged beside its folder and moved in only when complete, what it replaced put back if a
move fails, and a second report into a folder being written is refused at once."""

import os
import sys
from pathlib import Path

from cli_runs import one_line, sacscale
from sacscale.commands import _report_output
from sacscale.cli import main
from sacscale.locks import lock_beside

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "evidence"))
from set_copies import copy_committed_set  # noqa: E402

SET = "h200x1_shared_short"


def earlier_report(out: Path) -> dict[str, bytes]:
    """`out` holding an earlier report's files, each with content of its own."""
    (out / "figures").mkdir(parents=True)
    files = {"report.md": b"# earlier\n", "numbers.json": b"{}\n", "figures/scaling_bars.png": b"earlier figure",
             "notes.txt": b"mine"}
    for rel, data in files.items():
        (out / rel).write_bytes(data)
    return files


def held(out: Path, files: dict[str, bytes]) -> None:
    """`out` holds exactly `files`, as they were, and nothing was left beside it."""
    assert {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()} == files
    assert sorted(p.name for p in out.parent.iterdir()) == [out.name]


def test_a_folder_at_a_page_is_refused_before_anything_is_written(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    out = tmp_path / "out" / "rep"
    files = earlier_report(out)
    (out / "report.html").mkdir()
    one_line(sacscale("report", "--run-set", root, "--output-dir", out),
             f"{out / 'report.html'}: a folder where the report writes a file; nothing was written")
    (out / "report.html").rmdir()
    held(out, files)


def test_a_move_that_fails_puts_back_what_it_replaced(tmp_path, monkeypatch, capsys):
    root = copy_committed_set(tmp_path, SET)
    out = tmp_path / "out" / "rep"
    files = earlier_report(out)
    real = _report_output.rename_into_place

    def rename(source, target):
        if Path(target) == out / "report.html":  # the last file moved in
            raise OSError(28, "No space left on device", str(target))
        real(source, target)

    monkeypatch.setattr(_report_output, "rename_into_place", rename)
    assert main(["report", "--run-set", str(root), "--output-dir", str(out)]) == 2
    assert capsys.readouterr().err.strip() == (f"sacscale report: error: {out / 'report.html'}: no space left on "
                                               "the device (disk full)")
    held(out, files)


def test_a_report_failing_part_way_removes_only_its_own_files(tmp_path, monkeypatch):
    root = copy_committed_set(tmp_path, SET)
    out = tmp_path / "out" / "rep"
    files = earlier_report(out)

    def fails(**inputs):  # meanwhile another process writes in the folder
        (out / "figures" / "theirs.png").write_bytes(b"theirs")
        raise ValueError("part way")

    monkeypatch.setattr("sacscale.report.build.write_report", fails)
    assert main(["report", "--run-set", str(root), "--output-dir", str(out)]) == 1
    held(out, {**files, "figures/theirs.png": b"theirs"})


def test_a_second_report_into_a_folder_being_written_is_refused(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    out = tmp_path / "out" / "rep"
    files = earlier_report(out)
    with lock_beside(out):  # a report being written into it
        one_line(sacscale("report", "--run-set", root, "--output-dir", out),
                 f"{out}: another report is being written into this folder (pid {os.getpid()} holds ")
        assert {p.name for p in out.parent.iterdir()} == {out.name, ".rep.lock"}
    held(out, files)


def test_a_whole_report_replaces_the_earlier_one_and_leaves_nothing_beside_it(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    out = tmp_path / "out" / "rep"
    earlier_report(out)
    done = sacscale("report", "--run-set", root, "--output-dir", out)
    assert done.returncode == 0, done.stderr
    assert (out / "report.md").read_text().startswith(f"# sacscale run set {SET}")
    assert (out / "figures" / "scaling_bars.png").read_bytes().startswith(b"\x89PNG")
    assert (out / "notes.txt").read_bytes() == b"mine"
    video = root.parents[1] / "reports" / SET / "figures" / "best_run.webp"
    assert (out / "figures" / "best_run.webp").read_bytes() == video.read_bytes()
    assert "figures/best_run.webp" in (out / "report.md").read_text()
    assert sorted(p.name for p in out.parent.iterdir()) == ["rep"]
    assert oct(out.stat().st_mode & 0o777) != "0o700"  # the folder made as any other, not as the private staging
