"""Figure references in the report's pages: two references swapped
in both pages (each figure then under the other's heading and caption), one figure shown
twice and another not, and a reference removed (a figure the evidence has data for, left
out unseen) all passed verify; the figures themselves were untouched."""

import pytest

from sacscale.evidence.verify import verify
from set_copies import copy_committed_set, report_file
from test_redraw_figures import _drawn_here

SET = "h200x1_shared_short"
MD, HTML = "![{alt}](figures/{name})", '<img alt="{alt}" src="figures/{name}">'


def _refs(name):
    alt = name.removesuffix(".png").replace("_", " ")
    return {"report.md": MD.format(alt=alt, name=name), "report.html": HTML.format(alt=alt, name=name)}


def _replace_in_both(root, edit):
    for page in ("report.md", "report.html"):
        path = report_file(root, page)
        text = path.read_text()
        path.write_text(edit(page, text))


def _swap(page, text):
    a, b = _refs("scaling_bars.png")[page], _refs("cumulative_steps.png")[page]
    assert a in text and b in text
    return text.replace(a, "\0").replace(b, a).replace("\0", b)


def _twice(page, text):
    a, b = _refs("scaling_bars.png")[page], _refs("cumulative_steps.png")[page]
    assert b in text
    return text.replace(b, a)


@pytest.mark.parametrize("edit, shows", [
    (_swap, "throughput_by_repeat.png, cumulative_steps.png, scaling_bars.png, return_vs_time.png"),
    (_twice, "throughput_by_repeat.png, scaling_bars.png, scaling_bars.png, return_vs_time.png"),
])
def test_figure_references_out_of_the_stages_order_are_named(tmp_path, edit, shows):
    root = copy_committed_set(tmp_path, SET)
    _replace_in_both(root, edit)
    problems = verify(root).problems()
    for page in ("report.md", "report.html"):
        assert any(p.startswith(f"derived: reports/{SET}/{page}: shows its figures as {shows}") and
                   "not one each in the order the report stage writes them" in p for p in problems), problems


def test_a_figure_left_out_of_both_pages_is_named_when_the_figures_are_drawn_again(tmp_path):
    root = _drawn_here(tmp_path)
    _replace_in_both(root, lambda page, text: text.replace(_refs("scaling_bars.png")[page], ""))
    assert verify(root).ok  # which figures have data only drawing them tells
    problems = verify(root, redraw_figures=True).problems()
    assert problems == [f"derived: reports/{root.name}/{page}: does not show scaling_bars.png, which the evidence "
                        "draws with data (the report stage shows it): does not match the evidence"
                        for page in ("report.md", "report.html")], problems
