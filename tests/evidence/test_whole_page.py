"""verify compares the whole page with the page its evidence gives, where the set's report
stage wrote this code's page format: every sentence, heading, caption, list line and code
block a reader sees, not only the tables, ratios and Environment list. Each edit below
passed verify when only those were read."""

import json
import shutil

import pytest
from set_copies import REPO, copy_committed_set, edit_text, made_current, remake_manifest, report_file

from sacscale.evidence.verify import verify
from sacscale.report.page_format import PAGE_FORMAT

SET = "h200x1_shared_short"


@pytest.fixture(scope="module")
def current(tmp_path_factory):
    root = copy_committed_set(tmp_path_factory.mktemp("current"), SET)
    docs = root.parent.parent / "docs"  # the checkout's deviations document, which the page links
    docs.mkdir()
    shutil.copy2(REPO / "docs" / "deviations.md", docs / "deviations.md")
    return made_current(root)


@pytest.fixture
def work(current, tmp_path):
    shutil.copytree(current.parent.parent, tmp_path / "repo")
    return tmp_path / "repo" / "results" / SET


def test_a_set_made_by_this_code_passes_with_its_whole_page_compared(current):
    result = verify(current)
    assert result.ok, result.problems()
    assert "both pages compared line by line with the page composed again from the evidence" in result.report_check
    # logs are not evidence: a copy without them says what it did not compare
    assert any("the list of failed attempts is taken as the page gives it" in n for n in result.notes)


# (page, text, its replacement, what the problem then quotes of the page)
EDITS = {
    "probe verdict in the summary": ("report.md", "- Correctness probe: PASS", "- Correctness probe: FAIL",
                                     "Correctness probe: FAIL"),
    "probe setting": ("report.md", "- world_size: 2", "- world_size: 4", "world_size: 4"),
    "an Environment line added": ("report.md", "- GPUs: NVIDIA H200",
                                  "- GPUs (second node): 7 more NVIDIA H200\n- GPUs: NVIDIA H200",
                                  "GPUs (second node): 7 more"),
    "a line of the lscpu block": ("report.html", "  0    0      0    0", "  0    0      1    0",
                                  "  0    0      1    0"),
    "the model's hash": ("report.md", "- sha256: 6429381f", "- sha256: 7429381f", "sha256: 7429381f"),
    "the runs planned": ("report.md", "Runs planned: 4; with evidence: 4.", "Runs planned: 8; with evidence: 8.",
                         "Runs planned: 8"),
    "a figure of the seed's table": ("report.md", "| 30,766 |", "| 31,766 |", "31,766"),
    "a number in a sentence": ("report.md", "The first 50% of each run", "The first 10% of each run", "first 10%"),
    "a heading": ("report.html", ">Limitations<", ">Caveats<", "Caveats"),
    "the evidence line's verdict": ("report.html", "verification: all files match", "verification: signed off",
                                    "verification: signed off"),
    "a link's target": ("report.md", "](../../docs/deviations.md)", "](https://evil.example/deviations.md)",
                        "link to https://evil.example/deviations.md"),
    "the page's title": ("report.html", "<title>sacscale run set", "<title>audited run set", "title audited"),
    "a tooltip": ("report.html", "<h2>Limitations", '<h2 title="signed off by the auditors">Limitations',
                  "tooltip signed off"),
    # a browser shows text put in <head> in the body, and text in a table outside its cells above it
    "text in the head": ("report.html", "</style></head>", "</style>Audited: every claim holds</head>",
                         "Audited: every claim holds"),
    "text in a table outside its cells": ("report.html", "<table>", "<table>Certified by the lab", "Certified by"),
    "a figure left out, its caption kept": ("report.md", "![throughput by repeat](figures/throughput_by_repeat.png)",
                                            "", "image figures/throughput_by_repeat.png"),
    # Python-Markdown takes it for a link definition and hides it; CommonMark (GitHub) shows it
    "a line only another renderer shows": ("report.md", "Runs planned: 4; with evidence: 4.",
                                           "Runs planned: 4; with evidence: 4.\n[Correction: the probe FAILED]: <#>",
                                           "[Correction: the probe FAILED]: <#>"),
}


@pytest.mark.parametrize("page, old, new, quoted", EDITS.values(), ids=list(EDITS))
def test_an_edit_outside_the_tables_is_named_with_its_line(work, page, old, new, quoted):
    edit_text(report_file(work, page), old, new)
    result = verify(work)
    assert not result.ok
    named = [p for p in result.derived if p.startswith(f"reports/{SET}/{page}")]
    assert any(quoted in p for p in named), result.derived


GLANCE = "<p><strong>At a glance:</strong>"
WARNING = "<p>Warning: 4 run(s) measured over less than 30 s"
# the same words drawn otherwise: (report.html, text, its replacement, what the problem quotes)
DRAWN_OTHERWISE = {
    # a <pre> scrolls sideways: what stands after 400 blanks is out of view
    "a caveat pushed out of view in a <pre>": (
        "= 1.719x (n = 2: too few", "= 1.719x" + " " * 400 + "(n = 2: too few", "1.719x" + " " * 20),
    "a warning pushed out of view": (WARNING, "<pre>" + " " * 600 + "Warning: 4 run(s) measured over less than 30 s",
                                     "shows '" + " " * 40),
    "a value moved under another column of a tool's output": (
        "GPU0     X  0-15    0       N/A", "GPU0     X  0-15            0   N/A", "0-15            0   N/A"),
    # a browser reads a carriage return as a line break: the row is two rows
    "a row of a tool's output split by a carriage return": ("  8    8      0    0", "  8    8\r      0    0",
                                                            "  8    8"),
    "a list numbered": ("<h2>Verdict</h2>\n<ul>", "<h2>Verdict</h2>\n<ol>", "in <ol>li"),
    "a heading made a title": ("<h3>Against the seed</h3>", "<h1>Against the seed</h1>", "in <h1>"),
    "a cell made a header cell": ("<td>n2_shared / n1_pool7 (n=2/2)</td>", "<th>n2_shared / n1_pool7 (n=2/2)</th>",
                                  "tr>th,td"),
    "empty bullets": ("<li>Correctness probe", "<li></li><li> </li><li>Correctness probe", "nothing in <ul>li>"),
    "an empty heading": ("<h2>Verdict</h2>", "<h1> </h1><h2>Verdict</h2>", "nothing in <h1>"),
    "a warning set apart as a quotation": (WARNING, "<blockquote>" + WARNING, "in <blockquote>p"),
    # a browser draws each line break, and each blank line of a preformatted block
    "text pushed down by line breaks": (WARNING, "<br>" * 500 + WARNING, "a line break in <>"),
    "blank lines in a tool's output": ("  8    8      0    0", "  8    8      0    0" + "\n" * 300,
                                       "a blank line in <pre>"),
    "a lead no longer bold": ("<strong>At a glance:</strong>", "At a glance:", "At a glance: two ranks"),
    "a verdict made bold": ("Correctness probe: PASS", "Correctness probe: <strong>PASS</strong>",
                            "⟨strong⟩PASS⟨/strong⟩"),
}


@pytest.mark.parametrize("old, new, quoted", DRAWN_OTHERWISE.values(), ids=list(DRAWN_OTHERWISE))
def test_the_same_words_drawn_otherwise_are_named(work, old, new, quoted):
    if old == WARNING and new.startswith("<pre>"):
        edit_text(report_file(work, "report.html"), "stable rate; run more iterations.</p>",
                  "stable rate; run more iterations.</pre>")
    if old.startswith("= 1.719x"):
        edit_text(report_file(work, "report.html"), GLANCE, "<pre><strong>At a glance:</strong>")
        edit_text(report_file(work, "report.html"), "the correctness probe passed.</p>",
                  "the correctness probe passed.</pre>")
    edit_text(report_file(work, "report.html"), old, new)
    result = verify(work)
    assert not result.ok
    named = [p for p in result.derived if p.startswith(f"reports/{SET}/report.html")]
    assert any(quoted in p for p in named), result.derived


def test_a_copy_of_the_set_without_the_checkouts_documents_verifies_the_same(work):
    shutil.rmtree(work.parent.parent / "docs")
    result = verify(work)
    assert result.ok, result.problems()


def test_a_removed_page_format_of_a_set_made_since_sets_record_one_is_named(work):
    scope_file = work / "evidence.json"
    scope = json.loads(scope_file.read_text())
    del scope["report_page"]
    scope_file.write_text(json.dumps(scope))
    run_json = work / "runs" / "shared_r1_n1_pool7" / "run.json"
    record = json.loads(run_json.read_text())
    run_json.write_text(json.dumps({**record, "started_at": "2027-01-01T00:00:00+00:00"}))
    remake_manifest(work)
    result = verify(work)
    assert any("records no report_page, though run shared_r1_n1_pool7 started at 2027-01-01" in p
               for p in result.scope), result.scope


def test_a_page_format_newer_than_this_codes_is_named(work):
    scope_file = work / "evidence.json"
    scope_file.write_text(json.dumps({**json.loads(scope_file.read_text()), "report_page": 99}))
    remake_manifest(work)
    result = verify(work)
    newer = f"report_page 99, newer than this code's page format ({PAGE_FORMAT})"
    assert any(newer in p for p in result.scope), result.scope


ATTEMPT = "shared_r1_n1_pool7.failed-20261204T101010.123456Z"


def _add_attempts_line(work, tail="", attempt=ATTEMPT):
    line = f"Failed or stopped attempts (kept under logs/, not evidence; each was rerun): `{attempt}`.{tail}"
    edit_text(report_file(work, "report.md"), "Runs planned: 4; with evidence: 4.\n",
              f"Runs planned: 4; with evidence: 4.\n\n{line}\n")
    html_line = line.replace(f"`{attempt}`", f"<code>{attempt}</code>")
    edit_text(report_file(work, "report.html"), "Runs planned: 4; with evidence: 4.</p>",
              f"Runs planned: 4; with evidence: 4.</p>\n<p>{html_line}</p>")


def test_the_attempts_line_of_a_copy_without_its_logs_is_not_compared(work):
    _add_attempts_line(work)
    result = verify(work)
    assert result.ok, result.problems()
    assert any("the list of failed attempts is taken as the page gives it" in n for n in result.notes)


def test_a_line_made_to_look_like_the_attempts_line_is_compared(work):
    _add_attempts_line(work, " Audited and signed off.")
    result = verify(work)
    assert any("Audited and signed off." in p and "which the evidence does not give" in p for p in result.derived), \
        result.derived


# what a browser shows otherwise than the page's text says (a reviewer's screenshots)
SHOWN_OTHERWISE = {
    "a colour scheme that whitens the headers": (
        "report.html", '<meta charset="utf-8">', '<meta charset="utf-8"><meta name="color-scheme" content="only dark">',
        "a <meta> with content, name"),
    "a sentence inside the title, in what looks like a tag": (
        "report.html", "</title>", '<em alt=" -- PROBE FAILED"></em></title>', "PROBE FAILED"),
    "two cells of the probe table made one": (
        "report.md", "| grad/actor | ", "| grad/actor \\| ", "grad/actor \\|"),
    "a space drawn as a dash before a number": ("report.html", "<td>1.", "<td>\u16801.", "\u1680"),
}


@pytest.mark.parametrize("page, old, new, quoted", SHOWN_OTHERWISE.values(), ids=list(SHOWN_OTHERWISE))
def test_what_a_browser_shows_otherwise_is_named(work, page, old, new, quoted):
    edit_text(report_file(work, page), old, new)
    result = verify(work)
    assert any(quoted in p or quoted.encode("unicode_escape").decode() in p for p in result.derived), result.derived


def test_a_figure_moved_under_another_heading_is_named(work):
    md = report_file(work, "report.md")
    text = md.read_text()
    figure = next(line for line in text.splitlines() if line.startswith("![learning curves]"))
    md.write_text(text.replace(figure + "\n", "", 1).replace("## Environment", figure + "\n\n## Environment", 1))
    result = verify(work)
    assert any("[image figures/learning_curves.png]" in p for p in result.derived), result.derived


def test_a_timed_out_attempt_in_the_stages_words_is_taken_as_listed(work):
    _add_attempts_line(work, attempt="shared_r1_n1_pool7.timed_out-20261204T101010.123456Z")
    result = verify(work)
    assert result.ok, result.problems()


def test_every_name_the_run_wrapper_gives_an_attempt_is_one_the_page_check_takes(tmp_path):
    from sacscale.evidence.report_page import page_attempts
    from sacscale.pipeline.run_folder_names import SET_ASIDE_AS
    from sacscale.pipeline.run_record import _move_aside
    from sacscale.report.build import ATTEMPTS_INTRO

    names = []
    for why in SET_ASIDE_AS:
        work = tmp_path / "work" / "shared_r1_n1_pool7"
        work.mkdir(parents=True)
        (work / "train.log").write_text("x")
        names.append(_move_aside(work, tmp_path / "attic", why).name)
    line = ATTEMPTS_INTRO + ", ".join(names) + "."
    assert page_attempts([line], ["shared_r1_n1_pool7"]) == names


def test_the_committed_set_made_by_this_code_has_its_whole_page_compared():
    result = verify(REPO / "results" / "h200x1_shared_recheck")  # made on one H200, its report on that machine
    assert result.ok, result.problems()
    assert "both pages compared line by line with the page composed again from the evidence" in result.report_check
