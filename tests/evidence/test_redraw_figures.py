"""`sacscale verify --redraw-figures`: the report's figures drawn again from the evidence
and compared pixel for pixel, so that an edited figure fails even with its name chunk and
drawing record edited too."""

import json
import subprocess
import sys

from PIL import Image, PngImagePlugin

from sacscale.evidence.verify import verify
from sacscale.report.build import draw_figures
from sacscale.report.figure_names import DRAWN_WITH_KEY, FIGURES, NAME_KEY, drawn_as, drawn_with
from sacscale.report.plots import drawing_record
from set_copies import copy_committed_set, report_file

# a GPU set with every figure (its figures are drawn again by each test that needs them as
# this checkout draws them, so a change of the drawing code breaks no test)
SET = "h200x1_learning_4096"


def _drawn_here(tmp_path):
    """A copy of SET whose figures are drawn by this checkout (they carry its record)."""
    work = copy_committed_set(tmp_path, SET)
    plan = json.loads((work / "plan.json").read_text())
    names = [r["name"] for r in plan["runs"]]
    summary = json.loads((work / "summary.json").read_text())
    metrics = [json.loads((work / "metrics" / f"{n}.json").read_text()) for n in names]
    draw_figures(summary, metrics, report_file(work, "figures"), [work / "runs" / n for n in names])
    return work


def _edit_pixels(path, texts=None):
    """Paint a 5x5 square black, keeping the figure's text chunks unless `texts` is given."""
    with Image.open(path) as image:
        image.load()
        kept = dict(image.text)
        edited = image.convert("RGB")
    for x in range(40, 45):
        for y in range(40, 45):
            edited.putpixel((x, y), (0, 0, 0))
    info = PngImagePlugin.PngInfo()
    for key, value in (texts if texts is not None else kept).items():
        info.add_text(key, value)
    edited.save(path, "PNG", pnginfo=info)


def test_figures_drawn_from_the_evidence_are_drawn_again_with_the_same_pixels(tmp_path):
    result = verify(_drawn_here(tmp_path), redraw_figures=True)
    assert result.ok, result.problems()
    assert f"the {len(FIGURES)} figures of reports/{SET}/figures (drawn again from the evidence: the same pixels)" \
        in result.checked


def test_figures_drawn_here_carry_their_name_and_drawing_record(tmp_path):
    folder = report_file(_drawn_here(tmp_path), "figures")
    for name in FIGURES.values():
        assert drawn_as(folder / name) == name
        assert drawn_with(folder / name) == drawing_record()
    assert drawing_record().startswith("matplotlib ")


def test_an_edited_figure_fails_though_its_chunks_are_kept(tmp_path):
    work = _drawn_here(tmp_path)
    figure = report_file(work, "figures") / FIGURES["scaling_bars"]
    _edit_pixels(figure)
    assert drawn_as(figure) == FIGURES["scaling_bars"]  # the name check alone is passed
    assert verify(work).ok  # without the flag the edit is not seen
    problems = verify(work, redraw_figures=True).problems()
    assert problems == [f"derived: reports/{SET}/figures/scaling_bars.png: not the figure the evidence draws here "
                        f"(its pixels differ; drawn by the same code and matplotlib as here ({drawing_record()}): "
                        "edited after the report was made?)"], problems


def test_an_edited_figure_that_claims_other_code_still_fails_and_says_so(tmp_path):
    work = _drawn_here(tmp_path)
    figure = report_file(work, "figures") / FIGURES["phase_times"]
    _edit_pixels(figure, {NAME_KEY.decode(): FIGURES["phase_times"],
                          DRAWN_WITH_KEY.decode(): "matplotlib 9.9, drawing code <b>x</b>"})
    problems = verify(work, redraw_figures=True).problems()
    assert len(problems) == 1 and "figures/phase_times.png: not the figure the evidence draws here" in problems[0]
    assert "drawn by 'matplotlib 9.9, drawing code <b>x</b>', here matplotlib" in problems[0]


def test_a_figure_that_is_no_image_is_named_in_one_line(tmp_path):
    work = copy_committed_set(tmp_path, SET)
    (report_file(work, "figures") / FIGURES["return_vs_time"]).write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    proc = subprocess.run([sys.executable, "-m", "sacscale.cli", "verify", str(work), "--redraw-figures"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "figures/return_vs_time.png: not the figure the evidence draws here (its pixels differ; no record" \
        in proc.stderr, proc.stderr
