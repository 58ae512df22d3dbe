"""Recorded tool outputs shown as code blocks (`lscpu -e`, `nvidia-smi topo -m` from
environment.json) are text from outside the code too: an escape sequence or a bidi override
in them reached report.md and report.html raw (`cat report.md` retitled and cleared the
terminal; the override showed the line reversed). Their tabs, which align the columns, stay."""

from pathlib import Path

from sacscale.report.build import environment_section
from sacscale.report.document import Document, to_html, to_markdown

HOSTILE = "CPU\tCORE\n0\t0\x1b]0;pwned\x07\x1b[2J \u202eevil\u2066x\n1\t1\x85<b>y</b>"


def _pages(env: dict) -> tuple[str, str]:
    doc = Document(title="t", blocks=environment_section(env))
    return to_markdown(doc), to_html(doc, Path("."), embed_images=False)


def test_control_and_bidi_characters_of_a_recorded_output_are_blanked():
    md, html = _pages({"cpu": {"layout": HOSTILE}, "nvidia": {"topo": HOSTILE}})
    for page in (md, html):
        assert "\x1b" not in page and "\x07" not in page and "\x85" not in page
        assert "\u202e" not in page and "\u2066" not in page
    assert "<b>" not in html and "&lt;b&gt;y" in html  # a fenced block's text stays text


def test_the_tabs_of_a_recorded_output_are_kept():
    md, _ = _pages({"cpu": {"layout": "CPU\tCORE\tSOCKET\n0\t0\t0"}})
    assert "CPU\tCORE\tSOCKET\n0\t0\t0" in md
