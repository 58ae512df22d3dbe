"""Names and recorded values from outside the code reach the report as text, never as
markup: the page built from markup-carrying names has exactly the elements of the page
built from plain ones, and shows every name verbatim."""

from collections import Counter

import pytest

from hostile_names import HOSTILE, names, run_set, structure
from sacscale.report.build import write_report
from sacscale.report.text import code, plain


def _page(root, hostile: bool):
    inputs = run_set(root, hostile)
    out = root / "reports" / "S"
    write_report(inputs["summary_path"], inputs["metrics_paths"], out / "report.md", out / "report.html",
                 out / "figures", environment=inputs["environment"], model=inputs["model"],
                 probe=inputs["probe"], run_dirs=inputs["run_dirs"], attempts=inputs["attempts"])
    return (out / "report.md").read_text(), structure((out / "report.html").read_text())


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    root = tmp_path_factory.mktemp("escaping")
    return _page(root / "plain", False), _page(root / "hostile", True)


def test_markup_in_names_adds_no_element_to_the_page(pages):
    (_, plain_page), (_, hostile_page) = pages
    assert Counter(hostile_page.elements) == Counter(plain_page.elements)
    assert not any(attr.startswith("on") for _, attrs in hostile_page.elements for attr in attrs)
    assert not [t for t in hostile_page.targets if "javascript" in t.lower() or t == "x"]


def test_every_name_is_shown_verbatim(pages):
    _, (md, page) = pages
    text = "".join(page.text)
    for value in names(True).values():
        assert value in text, value
    assert "javascript:alert(1)" in md  # shown, as text


@pytest.mark.parametrize("value", [*HOSTILE, "`", "``x``", "a|b", "x\n<div>y</div>", "", "&lt;b&gt;"])
def test_escapes_are_identity_for_plain_names_and_neutral_for_markup(value):
    import markdown

    for rendered in (plain(value), code(value)):
        html = markdown.markdown(f"before {rendered} after", extensions=["tables", "fenced_code"])
        tags = {t for t, _ in structure(html).elements}
        assert tags <= {"p", "code"}, (value, html)
        assert " ".join(value.split("\n")) in "".join(structure(html).text), (value, html)
    for name in ("n1_local", "h200_r1_n2_pool", "cuda:0,1", "0,1", "/work/x/learner.py", "NCCL_DEBUG=INFO"):
        assert plain(name) == name and code(name) == f"`{name}`"


@pytest.mark.parametrize("bidi", ["\u202e", "\u202a", "\u2066", "\u2067", "\u2068", "\u2069", "\u200f", "\u200e"])
def test_bidi_controls_do_not_reach_the_report(bidi):
    from sacscale.report.text import one_line, plain

    value = f"run{bidi}gnp.exe"
    assert bidi not in plain(value) and bidi not in one_line(value)
    assert one_line(value) == "run gnp.exe"
