"""The figures a report's text states, in a set whose page is not compared whole (made before
sets recorded their page format): only ratios with the report's three decimals were read, so
`9.9x` or `10x` added to a page, the at-a-glance efficiency changed from 86% to 99%, or an
added `42,000 env steps/s` passed verify. Every ratio, percentage and rate the text states is
now one of the set's, at the precision it is written with."""

import pytest

from sacscale.evidence.verify import verify
from set_copies import copy_committed_set, report_file

SET = "h200x1_shared_short"  # a set made before sets recorded their page format
GLANCE_MD = "per-rank efficiency `n2_shared` 86%"
GLANCE_HTML = "per-rank efficiency <code>n2_shared</code> 86%"
NOT_A_FIGURE = ("is no figure of this set's (no {what} of its tables, recomputed from the evidence, nor of the text "
                "the report stage writes for it, rounds to it): does not match the evidence")


def _edit(root, page: str, old: str, new: str) -> None:
    path = report_file(root, page)
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def _named(page: str, line: int, figure: str, sentence: str, what: str = "ratio") -> str:
    return (f"derived: reports/{SET}/{page} line {line}: {figure!r} (in {sentence!r}) "
            + NOT_A_FIGURE.format(what=what))


@pytest.mark.parametrize("figure", ["9.9x", "9.90x", "10x", "10 times", "9.9\u00d7"])
def test_a_ratio_of_any_precision_added_to_report_md_is_named(tmp_path, figure):
    root = copy_committed_set(tmp_path, SET)
    _edit(root, "report.md", "**At a glance:**", f"Two GPUs give a {figure} speed-up.\n\n**At a glance:**")
    problems = verify(root).problems()
    assert problems == [_named("report.md", 3, figure, f"Two GPUs give a {figure} speed-up.")], problems


def test_a_ratio_added_to_report_html_is_named(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    _edit(root, "report.html", "<body>\n", "<body>\n<p>Headline: 9.9<em>x</em> speed-up</p>\n")
    problems = verify(root).problems()
    assert problems == [_named("report.html", 12, "9.9x", "Headline: 9.9x speed-up")], problems


@pytest.mark.parametrize("page, glance, line", [("report.md", GLANCE_MD, 3), ("report.html", GLANCE_HTML, 13)])
def test_the_efficiency_at_a_glance_changed_is_named(tmp_path, page, glance, line):
    root = copy_committed_set(tmp_path, SET)
    _edit(root, page, glance, glance.replace("86%", "99%"))
    problems = verify(root).problems()
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"derived: reports/{SET}/{page} line {line}: '99%' (in '...")
    assert problems[0].endswith(NOT_A_FIGURE.format(what="ratio or efficiency")), problems


def test_a_figure_changed_to_one_the_stage_writes_elsewhere_is_named(tmp_path):
    # `100% = each added rank as fast as the first` is the stage's own; the set's efficiency is 86%
    root = copy_committed_set(tmp_path, SET)
    _edit(root, "report.md", GLANCE_MD, GLANCE_MD.replace("86%", "100%"))
    problems = verify(root).problems()
    assert problems == [
        f"derived: reports/{SET}/report.md lines 3, 9: '100%' is written 2 times in its text, where the page its "
        "evidence gives writes it once, and is no ratio or efficiency of its tables, recomputed from the evidence (a "
        "figure of the set changed to one of the report stage's own words?): does not match the evidence"], problems


@pytest.mark.parametrize("page", ["report.md", "report.html"])
def test_an_added_rate_is_named(tmp_path, page):
    root = copy_committed_set(tmp_path, SET)
    glance = GLANCE_MD if page == "report.md" else GLANCE_HTML
    _edit(root, page, glance, f"{glance}, 42,000 env steps/s")
    problems = verify(root).problems()
    assert len(problems) == 1, problems
    assert "'42,000 env steps/s' (in '..." in problems[0], problems
    assert problems[0].endswith(NOT_A_FIGURE.format(what="rate")), problems


def test_a_figure_of_the_set_at_another_precision_passes(tmp_path):
    # 1.72x is the set's 1.719x at two decimals, 30,150 env steps/s its n2_shared mean
    root = copy_committed_set(tmp_path, SET)
    _edit(root, "report.md", GLANCE_MD, f"{GLANCE_MD} (1.72x, 30,150 env steps/s)")
    result = verify(root)
    assert result.ok, result.problems()


def test_the_deviations_heading_moved_above_the_verdict_hides_nothing(tmp_path):
    # older pages carry a copy of the deviations document, whose figures are not read; its
    # heading moved above the stage's own text does not make that text a copy
    root = copy_committed_set(tmp_path, SET)
    _edit(root, "report.md", "## Deviations from the reference system\n", "")
    _edit(root, "report.md", "**At a glance:**", "## Deviations from the reference system\n\n**At a glance:**")
    _edit(root, "report.md", GLANCE_MD, GLANCE_MD.replace("86%", "99%"))
    problems = verify(root).problems()
    assert any(p.startswith(f"derived: reports/{SET}/report.md line 5: '99%' (in '...") for p in problems), problems


@pytest.mark.parametrize("written, shown", [
    ("93 percent", "93 percent"), ("93 per cent", "93 per cent"), ("93\uff05", "93%"),
    ("\uff19\uff13%", "93%"), ("93\u00a0%", "93 %")])
def test_an_efficiency_changed_however_written_is_named(tmp_path, written, shown):
    """A percent word, a fullwidth sign or fullwidth digits read as `93%` does (NFKC)."""
    root = copy_committed_set(tmp_path, SET)
    _edit(root, "report.md", GLANCE_MD, GLANCE_MD.replace("86%", written))
    problems = verify(root).problems()
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"derived: reports/{SET}/report.md line 3: {shown!r} (in '..."), problems
    assert problems[0].endswith(NOT_A_FIGURE.format(what="ratio or efficiency")), problems


def test_an_efficiency_written_as_a_word_in_report_html_is_named(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    _edit(root, "report.html", GLANCE_HTML, GLANCE_HTML.replace("86%", "93 percent"))
    problems = verify(root).problems()
    assert len(problems) == 1 and problems[0].startswith(f"derived: reports/{SET}/report.html line 13: "
                                                         "'93 percent' (in '..."), problems


@pytest.mark.parametrize("rate", ["45k env steps/s", "99,999 env-steps/s", "99,999 steps/sec",
                                  "99,999 steps per second", "45 thousand env steps/s", "1.2M steps/s", "99,999 SPS"])
def test_an_added_rate_however_spelled_is_named(tmp_path, rate):
    root = copy_committed_set(tmp_path, SET)
    _edit(root, "report.md", GLANCE_MD, f"{GLANCE_MD} (about {rate} on the pair)")
    problems = verify(root).problems()
    assert len(problems) == 1, problems
    assert f"line 3: {rate!r} (in '..." in problems[0], problems
    assert problems[0].endswith(NOT_A_FIGURE.format(what="rate")), problems


def test_a_rate_of_the_set_written_with_a_magnitude_passes(tmp_path):
    # 30k is the set's n2_shared mean (30,150 env steps/s) to the thousand
    root = copy_committed_set(tmp_path, SET)
    _edit(root, "report.md", GLANCE_MD, f"{GLANCE_MD} (about 30k env-steps/sec)")
    assert verify(root).problems() == []
