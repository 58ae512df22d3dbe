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


def test_a_value_with_tildes_is_not_struck_through_on_github(tmp_path, monkeypatch):
    monkeypatch.setattr(hostile_names, "names", _struck_names)
    inputs = hostile_names.run_set(tmp_path, True)
    out = tmp_path / "reports" / "S"
    write_report(inputs["summary_path"], inputs["metrics_paths"], out / "report.md", out / "report.html",
                 out / "figures", environment=inputs["environment"], model=inputs["model"],
                 probe=inputs["probe"], run_dirs=inputs["run_dirs"], attempts=inputs["attempts"])
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
