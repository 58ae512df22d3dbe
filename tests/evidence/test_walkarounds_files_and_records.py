"""Walk-arounds of `sacscale verify`: a sparse file of GBs in a
set made before the size budget (no budget to name it by: it was hashed, about 1 s a GB)."""

import time

from sacscale.evidence.verify import verify
from set_copies import copy_committed_set, remake_manifest

PRE_BUDGET_SET = "h200x1"  # no evidence.json


def test_a_sparse_file_in_a_set_made_before_the_budget_is_named_not_hashed(tmp_path):
    work = copy_committed_set(tmp_path, PRE_BUDGET_SET)
    assert not (work / "evidence.json").exists()
    event = sorted((work / "runs").glob("*/tb/rank0/events*"))[0]
    with open(event, "r+b") as fh:
        fh.truncate(64 << 30)  # sparse: hashing it would read 64 GB
    t0 = time.monotonic()
    result = verify(work)
    assert time.monotonic() - t0 < 60
    rel = event.relative_to(work).as_posix()
    assert [p for p in result.problems() if p.startswith(f"scope: {rel}: 68,719,476,736 bytes with holes")], \
        result.problems()


def test_the_untouched_pre_budget_copy_verifies(tmp_path):
    assert verify(copy_committed_set(tmp_path, PRE_BUDGET_SET)).ok


def _names_figures(folder, drawn):
    """Figures of the set as the report stage now writes them: each carries its name."""
    from PIL import Image, PngImagePlugin
    for name, was in drawn.items():
        path = folder / "figures" / name
        with Image.open(path) as image:
            image.load()
            info = PngImagePlugin.PngInfo()
            if was is not None:
                info.add_text("sacscale-figure", was)
            image.save(path, "PNG", pnginfo=info)


def test_two_figures_of_the_set_swapped_fail(tmp_path):
    from sacscale.report.figure_names import FIGURES
    work = copy_committed_set(tmp_path, "h200x1_shared_short")
    folder = work.parent.parent / "reports" / work.name
    names = sorted(n for n in FIGURES.values() if (folder / "figures" / n).is_file())
    _names_figures(folder, {n: n for n in names})
    assert verify(work).ok, verify(work).problems()
    a, b = folder / "figures" / names[0], folder / "figures" / names[1]
    data_a, data_b = a.read_bytes(), b.read_bytes()
    a.write_bytes(data_b)
    b.write_bytes(data_a)
    problems = verify(work).problems()
    assert [p for p in problems if f"figures/{names[0]}: is the figure the report stage drew as '{names[1]}'" in p], \
        problems


def test_a_figure_without_its_name_among_named_ones_fails(tmp_path):
    from sacscale.report.figure_names import FIGURES
    work = copy_committed_set(tmp_path, "h200x1_shared_short")
    folder = work.parent.parent / "reports" / work.name
    names = sorted(n for n in FIGURES.values() if (folder / "figures" / n).is_file())
    _names_figures(folder, {n: (None if n == names[0] else n) for n in names})
    problems = verify(work).problems()
    assert [p for p in problems if f"figures/{names[0]}: carries no figure name" in p], problems


def test_the_report_stage_names_each_figure_it_draws(tmp_path):
    from sacscale.report import plots
    from sacscale.report.figure_names import drawn_as
    import matplotlib.pyplot as plt
    fig, _ = plt.subplots()
    plots._save(fig, tmp_path / "scaling_bars.png")
    assert drawn_as(tmp_path / "scaling_bars.png") == "scaling_bars.png"


def _remanifest(root):
    remake_manifest(root)  # as a forger could: manifest refuses a set whose plan.json it cannot read


def test_a_record_with_a_key_given_twice_fails_even_with_a_fresh_manifest(tmp_path):
    """Python kept the last value and verify passed; a reader that keeps the first shows another."""
    work = copy_committed_set(tmp_path, "h200x1_shared_short")
    summary = work / "summary.json"
    summary.write_text(summary.read_text().replace('"figure":', '"figure": "x", "figure":', 1))
    _remanifest(work)
    problems = verify(work).problems()
    assert "structure: summary.json: not valid JSON (the key 'figure' is given twice (readers differ on which " \
           "value holds))" in problems, problems


def test_a_record_with_an_integer_of_thousands_of_digits_is_named(tmp_path):
    """int() of 5,000 digits raised ValueError past the JSON error handling: exit 1 as unexpected."""
    work = copy_committed_set(tmp_path, "h200x1_shared_short")
    plan = work / "plan.json"
    plan.write_text(plan.read_text().replace("{", '{"zz": ' + "9" * 5000 + ", ", 1))
    _remanifest(work)
    problems = verify(work).problems()
    assert [p for p in problems if "plan.json: not valid JSON (an integer of 5,000 digits" in p], problems


def test_a_reports_folder_that_is_a_link_fails(tmp_path):
    """A link at reports/S was refused, one at reports/ passed."""
    import os
    import shutil
    work = copy_committed_set(tmp_path, "h200x1_shared_short")
    reports = work.parent.parent / "reports"
    shutil.move(reports, tmp_path / "elsewhere")
    os.symlink(tmp_path / "elsewhere", reports)
    problems = verify(work).problems()
    assert [p for p in problems if "../../reports (symbolic link" in p], problems


def _both_pages(work, old, new):
    folder = work.parent.parent / "reports" / work.name
    for page in ("report.md", "report.html"):
        text = (folder / page).read_text()
        assert old in text
        (folder / page).write_text(text.replace(old, new))


def test_a_ratio_shown_with_a_minus_sign_fails(tmp_path):
    """`−1.719x` (U+2212, the sign the report stage writes elsewhere) was read as 1.719: passed."""
    work = copy_committed_set(tmp_path, "h200x1_shared_short")
    _both_pages(work, "1.719x", "\u22121.719x")
    problems = verify(work).problems()
    assert [p for p in problems if "shows '\u22121.719x', the evidence gives 1.71915" in p], problems


def test_a_ratio_with_a_superscript_digit_after_it_fails(tmp_path):
    """`1.719¹x` reads as another number (or a footnote the report does not have): passed."""
    work = copy_committed_set(tmp_path, "h200x1_shared_short")
    _both_pages(work, "1.719x", "1.719\u00b9x")
    problems = verify(work).problems()
    assert [p for p in problems if "shows '1.719\u00b9x'" in p], problems


# --- where verify and a browser or GitHub read a page differently ------------------

CELL = '<td style="text-align: right;">1.719x</td>'


def _html_problems(work, old, new):
    """verify's problems after one edit of report.html."""
    page = work.parent.parent / "reports" / work.name / "report.html"
    text = page.read_text()
    assert old in text
    page.write_text(text.replace(old, new, 1))
    return verify(work).problems()


def test_a_page_frame_element_that_a_browser_reads_otherwise_fails(tmp_path):
    """`<title/>` stays open in a browser (the slash is ignored) and a <head> in the body is
    ignored: the cell showed 9.999x to a reader, 1.719x to verify, and passed."""
    from sacscale.evidence.report_html import presentation_problems
    work = copy_committed_set(tmp_path, "h200x1_shared_short")
    problems = _html_problems(work, CELL, CELL.replace("1.719x", "<title/>1.719x</title><head>9.999x</head>"))
    assert [p for p in problems if "a self-closing <title/>" in p], problems
    assert [p for p in problems if "a second <head> (a browser ignores it and shows what it holds)" in p], problems
    page = "<html><head><title>t</title></head><body><p>x</p><meta name=a content=b></body></html>"
    assert [p for p in presentation_problems("r.html", page) if "a <meta> inside the body" in p]


def test_a_cell_a_browser_ends_at_the_next_is_read_as_two(tmp_path):
    """`<td>9.999x<td>1.719x` is two cells to a browser; verify read one holding 1.719x."""
    from sacscale.report.shown import shown_html_tables
    table = shown_html_tables("<table><tr><th>a</th><th>b</th></tr><tr><td>n<td>9.999x<td>1.719x</tr></table>")[0]
    assert table.rows == [["n", "9.999x", "1.719x"]]
    work = copy_committed_set(tmp_path, "h200x1_shared_short")
    assert not verify(work).problems()
    problems = _html_problems(work, CELL, CELL.replace("1.719x</td>", "9.999x") + CELL)
    assert [p for p in problems if "not a row the evidence gives" in p], problems


def test_a_line_break_inside_a_number_parts_it():
    """`1.7<br>19x` shows 1.7 over 19x; it was read as 1.719x."""
    from sacscale.report.shown import shown_html_tables
    table = shown_html_tables("<table><tr><th>a</th></tr><tr><td>1.7<br>19x</td></tr></table>")[0]
    assert table.rows == [["1.7 19x"]]


def test_a_page_cut_short_fails(tmp_path):
    """The first half of report.html (all its tables, no figures, no end) passed."""
    from sacscale.evidence.report_html import presentation_problems
    page = (copy_committed_set(tmp_path, "h200x1_shared_short").parent.parent / "reports" /
            "h200x1_shared_short" / "report.html").read_text()
    assert not presentation_problems("r.html", page)
    half = presentation_problems("r.html", page[: len(page) // 2])
    assert [p for p in half if "no </html> at its end" in p], half


def test_a_number_behind_a_blank_letter_fails():
    """A Hangul filler (a letter that shows as nothing) made `9.999x` part of a word, which the
    reader of numbers skips: the cell showed 9.999x and passed on its 1.719x."""
    from sacscale.evidence.report_check import _invisible
    from sacscale.report.text import plain
    for ch in ("\u3164", "\u115f", "\uffa0", "\ufe0f", "\U000e0031"):
        assert _invisible(f"{ch}9.999x 1.719x"), repr(ch)
        assert ch not in plain(f"a{ch}b")


def test_markdown_that_github_reads_as_a_table_and_verify_as_prose_fails(tmp_path):
    """GitHub starts a table right under a line of prose, Python-Markdown after a blank line
    only; a raw table inside <head> is hidden here and shown there. Both passed."""
    from sacscale.evidence.report_html import rendered_markdown_problems
    under_prose = "Corrected:\n| configuration | ratio |\n|---|---:|\n| n2_shared / n1_pool7 | 9.999x |\n"
    assert [p for p in rendered_markdown_problems("r.md", under_prose) if "1 table delimiter row(s)" in p]
    assert not rendered_markdown_problems("r.md", "x\n\n| a | b |\n|---|---:|\n| c | 1 |\n\n```\n|---|\n```\n")
    in_head = "<head><table><tr><td>9.999x</td></tr></table></head>\n"
    assert [p for p in rendered_markdown_problems("r.md", in_head) if "a <head> element" in p]


# --- records that say the set is other than it is ---------------------------------

def _edit_json(path, **fields):
    import json
    data = json.loads(path.read_text())
    data.update(fields)
    path.write_text(json.dumps(data))


def test_a_run_the_wrapper_recorded_as_failed_fails(tmp_path):
    work = copy_committed_set(tmp_path, "h200x1_shared_short")
    _edit_json(work / "runs" / "shared_r1_n1_pool7" / "run.json", status="failed", exit_status=1)
    _remanifest(work)
    problems = verify(work).problems()
    assert "record: shared_r1_n1_pool7: run.json status 'failed', exit status 1: not a completed run" in problems, \
        problems


def test_an_evidence_format_this_code_does_not_know_fails(tmp_path):
    """format 3 was taken as the current one, format 1 as a set made before the budget."""
    work = copy_committed_set(tmp_path, "h200x1_shared_short")
    for fmt in (3, 1):
        _edit_json(work / "evidence.json", format=fmt)
        _remanifest(work)
        problems = verify(work).problems()
        assert f"scope: evidence.json: format {fmt}, not this code's evidence format (2)" in problems, problems


def test_evidence_json_removed_from_a_recent_set_fails(tmp_path):
    """Without it the set passed as one made before the budget: its left-out files' hashes
    and the budget no longer checked."""
    work = copy_committed_set(tmp_path, "h200x1_shared_short")
    (work / "evidence.json").unlink()
    _remanifest(work)
    problems = verify(work).problems()
    assert [p for p in problems if p.startswith("scope: evidence.json: missing, though run ") and "removed?" in p], \
        problems


def test_a_left_out_file_listed_twice_fails(tmp_path):
    import json
    work = copy_committed_set(tmp_path, "h200x1_shared_short")
    scope = json.loads((work / "evidence.json").read_text())
    _edit_json(work / "evidence.json", left_out=scope["left_out"] + scope["left_out"][:1])
    _remanifest(work)
    problems = verify(work).problems()
    assert f"scope: evidence.json: {scope['left_out'][0]['path']} is listed as left out more than once" in problems, \
        problems


def test_a_file_where_the_set_keeps_a_folder_is_named(tmp_path):
    """`runs/` or `metrics/` a file was named only through what it broke (`unexpected
    structure ... pairs: no runs ...`)."""
    import shutil
    work = copy_committed_set(tmp_path, "h200x1_shared_short")
    shutil.rmtree(work / "metrics")
    (work / "metrics").write_text("x\n")
    problems = verify(work).problems()
    assert "structure: metrics: a file where the set keeps a folder" in problems, problems
