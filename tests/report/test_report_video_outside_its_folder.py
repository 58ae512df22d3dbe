"""`report --video V` with V outside the report's folder (rendered to /tmp, or another
report's figures/best_run.webp) was accepted, then failed once the figures were drawn:
`ValueError: ... is not in the subpath of '.../.rep.report-XXXXXXXX' ...`, exit 1. The page
links its video by a path relative to itself; such a video is now copied into the report's
figures folder as best_run.webp (as `--run-set` copies a set's video into a report built
elsewhere), and the page links the copy."""

import shutil
from pathlib import Path

import pytest

from sacscale.cli import main

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "results" / "h200x1_shared_short"
FIGURES = REPO / "reports" / "h200x1_shared_short" / "figures"


def _report(tmp_path: Path, out: Path, video: Path, record: Path) -> int:
    shutil.copy(RESULTS / "summary.json", tmp_path / "s.json")
    return main([str(a) for a in ("report", "--summary", tmp_path / "s.json",
                                  "--metrics", *sorted((RESULTS / "metrics").glob("*.json")),
                                  "--output-md", out / "report.md", "--output-html", out / "report.html",
                                  "--figures-dir", out / "figures", "--video", video, "--video-record", record)])


@pytest.mark.parametrize("where", ["x/plain.webp", "other_report/figures/best_run.webp"])
def test_a_video_outside_the_reports_folder_is_copied_in_and_linked(capsys, tmp_path, where):
    video, record = tmp_path / where, tmp_path / "x" / "best_run.json"
    video.parent.mkdir(parents=True)
    record.parent.mkdir(exist_ok=True)
    shutil.copy(FIGURES / "best_run.webp", video)
    shutil.copy(FIGURES / "best_run.json", record)
    out = tmp_path / "rep"
    assert _report(tmp_path, out, video, record) == 0, capsys.readouterr().err
    assert (out / "figures" / "best_run.webp").read_bytes() == video.read_bytes()
    assert "](figures/best_run.webp" in (out / "report.md").read_text()
    assert 'src="figures/best_run.webp"' in (out / "report.html").read_text()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no staging left
    assert video.is_file()  # copied, not moved


def test_a_video_inside_the_reports_folder_is_linked_where_it_is(capsys, tmp_path):
    out = tmp_path / "rep"
    (out / "clips").mkdir(parents=True)
    video, record = out / "clips" / "walk.webp", tmp_path / "best_run.json"
    shutil.copy(FIGURES / "best_run.webp", video)
    shutil.copy(FIGURES / "best_run.json", record)
    assert _report(tmp_path, out, video, record) == 0, capsys.readouterr().err
    assert "](clips/walk.webp" in (out / "report.md").read_text()
    assert not (out / "figures" / "best_run.webp").exists()


@pytest.mark.parametrize("where, link", [("rep/notes/dev.md", "notes/dev.md"), ("docs/dev.md", "../docs/dev.md")])
def test_the_deviations_document_is_linked_from_the_reports_folder(capsys, tmp_path, where, link):
    """The other input the page links rather than embeds: linked by its path from the
    report's folder, not from the staging folder (`../rep/notes/dev.md` named the folder)."""
    deviations = tmp_path / where
    deviations.parent.mkdir(parents=True)
    deviations.write_text("# Deviations\n")
    shutil.copy(RESULTS / "summary.json", tmp_path / "s.json")
    out = tmp_path / "rep"
    code = main([str(a) for a in ("report", "--summary", tmp_path / "s.json",
                                  "--metrics", *sorted((RESULTS / "metrics").glob("*.json")),
                                  "--output-md", out / "report.md", "--output-html", out / "report.html",
                                  "--figures-dir", out / "figures", "--deviations", deviations)])
    assert code == 0, capsys.readouterr().err
    assert f"[dev.md]({link})" in (out / "report.md").read_text()
