"""Text from outside the code is text on GitHub too: GFM strikes `~~x~~` through, which
Python-Markdown (the HTML page's renderer) leaves as it is, so report.md and the README's
status block showed a name or recorded value struck through there."""

import pytest
from markdown_it import MarkdownIt

import hostile_names
from sacscale.report.build import write_report
from sacscale.report.text import plain

STRUCK = "~~passes~~ ~x~"
GFM = MarkdownIt("gfm-like").disable("linkify")  # GitHub's tables and strikethrough


def _struck_names(hostile: bool) -> dict[str, str]:
    if not hostile:
        return PLAIN(False)
    return {"set": "S", "base": "n1_a", "other": "n2_b", "attempt": f"a{STRUCK}", "value": f"v {STRUCK}",
            "path": f"/opt/{STRUCK}/learner.py"}


PLAIN = hostile_names.names


def _report(tmp_path):
    """The report of a set whose names and values are `hostile_names.names` (patched); its folder."""
    inputs = hostile_names.run_set(tmp_path, True)
    out = tmp_path / "reports" / "S"
    write_report(inputs["summary_path"], inputs["metrics_paths"], out / "report.md", out / "report.html",
                 out / "figures", environment=inputs["environment"], model=inputs["model"],
                 probe=inputs["probe"], run_dirs=inputs["run_dirs"], attempts=inputs["attempts"])
    return out


def test_a_value_with_tildes_is_not_struck_through_on_github(tmp_path, monkeypatch):
    monkeypatch.setattr(hostile_names, "names", _struck_names)
    out = _report(tmp_path)
    page = GFM.render((out / "report.md").read_text())
    assert "<s>" not in page and "<del>" not in page
    assert f"v {STRUCK}" in page  # shown as written
    assert f"v {STRUCK}" in "".join(hostile_names.structure((out / "report.html").read_text()).text)


@pytest.mark.parametrize("value", ["~~a~~", "a~~b~~c", "~a~", "~~~", "~ ~~ ~"])
def test_plain_tildes_render_as_text_in_both_renderers(value):
    import markdown

    for html in (GFM.render(f"x {plain(value)} y"), markdown.markdown(f"x {plain(value)} y")):
        assert "<s>" not in html and "<del>" not in html
        assert value in "".join(hostile_names.structure(html).text)


def _long_names(hostile: bool) -> dict[str, str]:
    names = PLAIN(False)
    if hostile:
        names["value"] = "<b>x</b>|`" * 2_500  # 25,000 characters of markup, in ~30 places
    return names


def test_a_recorded_value_of_any_length_is_shown_cut_saying_so(tmp_path, monkeypatch):
    """Python-Markdown's time grows with the square of an escaped value's length: a recorded
    value of 200,000 characters took the report stage 5 minutes, a megabyte hours."""
    monkeypatch.setattr(hostile_names, "names", _long_names)
    out = _report(tmp_path)
    md = (out / "report.md").read_text()
    assert "... (25,000 characters in all, shown cut)" in md
    assert len(md) < 400_000  # each value at most 2,000 characters (escaped), not 25,000
    text = "".join(hostile_names.structure((out / "report.html").read_text()).text)
    assert ("<b>x</b>|`" * 200) in text  # shown as text, up to the cut


def test_plain_and_code_cut_a_long_value():
    from sacscale.report.text import code

    for escape in (plain, code):
        shown = escape("a" * 1_000_000)
        assert len(shown) < 2_100 and "a" * 2_000 in shown and "a" * 2_001 not in shown
        assert "(1,000,000 characters in all, shown cut)" in shown
    assert plain("a" * 2_000) == "a" * 2_000
