"""verify reads the numbers of every report: numbers.json compared number by
number with the evidence, and every numeric cell of the tables a renderer shows."""

import json

from sacscale.analysis.aggregate import describe, summarize
from sacscale.analysis.metrics import analyze_run
from sacscale.evidence.verify import Verification, check_report
from sacscale.report.build import write_report
from sacscale.report.shown import shown_numbers, shown_tables, shows
from synthetic_runs import simple_run

TTQ_ROW = "| ours_n1 | episode length >= 950 | 2/2 | 3,500,000 | 120.5 |"


def _set(tmp_path):
    """results/S (runs, metrics, a summary with time to quality) and its report in reports/S."""
    root = tmp_path / "results" / "S"
    metrics = [analyze_run(simple_run(root / "runs" / f"p_r{r}_{c}", c, r, rate * (1 + 0.05 * r), 1))
               for r in (1, 2) for c, rate in (("ref_n1", 1000.0), ("ours_n1", 1500.0))]
    paths = []
    for m in metrics:
        paths.append(root / "metrics" / f"{m['run']}.json")
        paths[-1].parent.mkdir(exist_ok=True)
        paths[-1].write_text(json.dumps(m))
    summary = summarize(metrics, ["ref_n1", "ours_n1"], meta={"run_set": "S"})
    steps, seconds = describe([3_400_000.0, 3_600_000.0]), describe([120.0, 121.0])
    never = {"n": 0, "mean": None, "std": None, "min": None, "max": None, "values": []}
    summary["configs"]["ours_n1"]["time_to_quality"] = {
        "episode_length": {"reached": 2, "of": 2, "threshold": 950.0, "env_steps": steps, "seconds": seconds},
        "normalised_tracking_ang_vel": {"reached": 0, "of": 2, "threshold": None, "env_steps": never,
                                        "seconds": never}}
    (root / "summary.json").write_text(json.dumps(summary))
    out = tmp_path / "reports" / "S"
    write_report(root / "summary.json", paths, out / "report.md", out / "report.html", out / "figures")
    return root, out, summary, metrics


def _other_notes(result):
    """The notes but those on the page's words and text figures, which a set without
    evidence.json or plan.json (this one, made of runs and a summary only) gets."""
    return [n for n in result.notes if "is not compared with the page its evidence gives" not in n
            and "the figures its text states are not checked" not in n]


def _check(root, summary, metrics, current=True):
    result = Verification(root=str(root))
    check_report(root, summary, metrics, result, current)
    return result


def test_the_report_stage_writes_the_numbers_and_they_verify(tmp_path):
    root, out, summary, metrics = _set(tmp_path)
    numbers = json.loads((out / "numbers.json").read_text())
    assert {"seed", "configurations", "ratios", "runs", "intervals", "windows", "time_to_quality"} \
        == set(numbers["tables"])
    ttq = {tuple(r["key"]): r for r in numbers["tables"]["time_to_quality"]["rows"]}
    reached = ttq[("ours_n1", "episode length >= 950")]
    assert reached["cells"] == {"reached": [2, 2], "env steps (mean)": [3_500_000.0], "seconds (mean)": [120.5]}
    # a threshold no repeat reached: a quantity, not a row the table prints
    assert ttq[("ours_n1", "yaw-rate tracking >= 0.65 of max")]["shown"] is False
    result = _check(root, summary, metrics)
    assert result.derived == [] and _other_notes(result) == []
    assert result.checked == ["reports/S/numbers.json", "reports/S/report.md", "reports/S/report.html"]
    assert result.report_check.startswith("report: reports/S/numbers.json compared number by number")


def test_a_changed_numeric_cell_fails_naming_table_row_and_column(tmp_path):
    root, out, summary, metrics = _set(tmp_path)
    md = (out / "report.md").read_text()
    assert TTQ_ROW in md
    (out / "report.md").write_text(md.replace(TTQ_ROW, TTQ_ROW.replace("3,500,000", "2,500,000")))
    derived = _check(root, summary, metrics).derived
    assert derived == ["reports/S/report.md: the time-to-quality table, row 'ours_n1 | episode length >= 950', "
                       "column 'env steps (mean)': shows '2,500,000', the evidence gives 3.5e+06: does not match "
                       "the evidence"]


def test_a_page_changed_between_two_checks_in_one_process_is_read_again(tmp_path):
    """A page is read once by its text (shown._read): the same file changed on disk between two
    checks is judged by what it holds now, and a caller that changes the tables it was given
    does not change what the next check reads."""
    root, out, summary, metrics = _set(tmp_path)
    assert _check(root, summary, metrics).derived == []
    shown_tables((out / "report.md").read_text())[0].rows.clear()
    assert _check(root, summary, metrics).derived == []
    md, page = (out / "report.md").read_text(), (out / "report.html").read_text()
    (out / "report.md").write_text(md.replace(TTQ_ROW, TTQ_ROW.replace("3,500,000", "2,500,000")))
    assert _check(root, summary, metrics).derived == [
        "reports/S/report.md: the time-to-quality table, row 'ours_n1 | episode length >= 950', column 'env steps "
        "(mean)': shows '2,500,000', the evidence gives 3.5e+06: does not match the evidence"]
    (out / "report.md").write_text(md)
    assert page.count(">3,500,000</td>") == 1
    (out / "report.html").write_text(page.replace(">3,500,000</td>", ">2,500,000</td>"))
    derived = _check(root, summary, metrics).derived
    assert len(derived) == 1 and derived[0].startswith("reports/S/report.html: the time-to-quality table"), derived


def test_reworded_prose_and_captions_do_not_matter(tmp_path):
    root, out, summary, metrics = _set(tmp_path)
    md = (out / "report.md").read_text()
    reworded = (md.replace("**At a glance:**", "**In short:**").replace("Measured (steady env steps/s",
                                                                       "What we measured (steady env steps/s")
                .replace("steady env steps/s per configuration (std:", "per configuration, steady rate (std:")
                .replace("### Time to quality", "### How long it took"))
    assert reworded != md
    (out / "report.md").write_text(reworded)
    assert _check(root, summary, metrics).derived == []


def test_an_edited_numbers_file_fails(tmp_path):
    root, out, summary, metrics = _set(tmp_path)
    numbers = json.loads((out / "numbers.json").read_text())
    numbers["tables"]["configurations"]["rows"][0]["cells"]["mean"] = [9999.0]
    (out / "numbers.json").write_text(json.dumps(numbers))
    derived = _check(root, summary, metrics).derived
    assert len(derived) == 1 and derived[0].startswith(
        "reports/S/numbers.json: table configurations, row 1 (ref_n1), mean[0]: stored 9999.0, recomputed"), derived


def test_a_table_kept_in_an_html_comment_is_not_read(tmp_path):
    """The walk-around: the original table inside an HTML comment, an edited one shown."""
    root, out, summary, metrics = _set(tmp_path)
    md = (out / "report.md").read_text()
    edited = TTQ_ROW.replace("120.5", "99.5")
    (out / "report.md").write_text(md.replace(TTQ_ROW, edited) + f"\n<!--\n{md}\n-->\n")
    derived = _check(root, summary, metrics).derived
    assert any("column 'seconds (mean)': shows '99.5'" in d for d in derived), derived
    # the table only inside a comment (or a hidden element): not shown, so missing
    start = md.index("| configuration | threshold |")
    table = md[start:md.index("\n\n", start)]
    for hidden in (f"<!--\n{table}\n-->", f'<div hidden markdown="1">\n\n{table}\n\n</div>'):
        (out / "report.md").write_text(md.replace(table, hidden))
        derived = _check(root, summary, metrics).derived
        missing = ("reports/S/report.md: the time-to-quality table is not shown (no table with its "
                   "header): does not match the evidence")
        # and the hiding markup itself is refused: the report stage writes none
        hiding = [d for d in derived if d != missing]
        assert missing in derived and hiding, (hidden, derived)
        assert all("(it could hide or change what is shown)" in d for d in hiding), (hidden, derived)


def test_a_report_made_before_the_numbers_file_is_read_by_its_tables(tmp_path):
    """No numbers.json: the tables parsed against the recomputed quantities. The seed
    table's row in its older order (baseline / compared), a row of n/a for a threshold
    no repeat reached and a table added after the report was written all pass (a set made
    before its plan recorded the schedule, `current=False`)."""
    root, out, summary, metrics = _set(tmp_path)
    (out / "numbers.json").unlink()
    md = (out / "report.md").read_text()
    seed_row = next(line for line in md.splitlines() if line.startswith("| ours_n1 / ref_n1 (n=2/2) |"))
    older = (md.replace(seed_row, seed_row.replace("ours_n1 / ref_n1", "ref_n1 / ours_n1"))
             .replace(TTQ_ROW, TTQ_ROW + "\n| ours_n1 | yaw-rate tracking >= 0.65 of max | 0/2 | n/a | n/a |"))
    start = older.index("### Measurement windows")
    older = older[:start] + older[older.index("\n### ", start + 1) + 1:]
    (out / "report.md").write_text(older)
    result = _check(root, summary, metrics, current=False)
    assert result.derived == []
    assert _other_notes(result) == ["reports/S/report.md: the measurement-window table: not recorded by this older set"]
    assert result.report_check.startswith("report: no numbers.json (a set made before the report wrote one)")
    # ... but a core table it always had is required
    start = older.index("### Per-run numbers")
    (out / "report.md").write_text(older[:start] + older[older.index("\n### ", start + 1) + 1:])
    assert any("the per-run table is not shown" in d for d in _check(root, summary, metrics, False).derived)


def test_a_row_the_evidence_does_not_give_fails(tmp_path):
    root, out, summary, metrics = _set(tmp_path)
    md = (out / "report.md").read_text()
    (out / "report.md").write_text(md.replace(TTQ_ROW, TTQ_ROW + "\n" + TTQ_ROW.replace("ours_n1", "ghost")))
    derived = _check(root, summary, metrics).derived
    assert derived == ["reports/S/report.md: the time-to-quality table, row 'ghost | episode length >= 950': not a "
                       "row the evidence gives: does not match the evidence"]


def test_a_cell_is_read_at_the_precision_it_shows():
    (number,) = shown_numbers("1.77x")
    assert shows(number, 1.7749) and shows(number, 1.765) and not shows(number, 1.7751)
    assert [n.value for n in shown_numbers("r1: 1,050, r2: 1,100")] == [1050.0, 1100.0]  # r1, r2 are names
    assert [(n.value, n.percent) for n in shown_numbers("98%")] == [(98.0, True)]
    assert shows(shown_numbers("98%")[0], 0.9812)
    assert [n.value for n in shown_numbers("n/a")] == [None]
    assert shown_numbers("not shown (n < 3)") == []


def test_only_what_a_renderer_shows_is_read():
    md = "| a | b |\n|---|---:|\n| x | 1 |\n\n<!--\n| a | b |\n|---|---:|\n| x | 2 |\n-->\n"
    tables = shown_tables(md)
    assert [(t.header, t.rows) for t in tables] == [(["a", "b"], [["x", "1"]])]
