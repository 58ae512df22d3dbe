"""The report's sentences against its tables: a ratio in the text is the one the tables
show for the comparison the sentence names, and it is read as a browser shows it. A set is
the one its records name, each run the one planned for it, in the plan's execution order;
a page is read only as long as the report stage writes one."""

import pytest

from sacscale.evidence.verify import verify
from set_copies import copy_committed_set, report_file

SYNC = "h200x1_shared_sync"  # three comparisons, each named in the at-a-glance line
SHORT = "h200x1_shared_short"


def _edit(root, page: str, old: str, new: str) -> None:
    path = report_file(root, page)
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize("page, first, second", [
    ("report.md", "`n2_shared` / `n1_pool7` = 1.199x", "`n2_shared_nosync` / `n1_pool7` = 1.852x"),
    ("report.html", "<code>n2_shared</code> / <code>n1_pool7</code> = 1.199x",
     "<code>n2_shared_nosync</code> / <code>n1_pool7</code> = 1.852x"),
])
def test_two_comparisons_ratios_swapped_in_a_sentence_are_named(tmp_path, page, first, second):
    root = copy_committed_set(tmp_path, SYNC)
    swapped = first.replace("1.199x", "1.852x"), second.replace("1.852x", "1.199x")
    _edit(root, page, first, swapped[0])
    _edit(root, page, second, swapped[1])
    problems = verify(root).problems()
    assert f"derived: reports/{SYNC}/{page}: its text gives n2_shared / n1_pool7 as 1.852x, its tables 1.199x (a " \
           "ratio of another comparison?): does not match the evidence" in problems, problems
    assert len(problems) == 2, problems


@pytest.mark.parametrize("page, written", [
    ("report.md", "9.999&#120;"), ("report.md", "9.999&#x78;"), ("report.md", "9.999*x*"),
    ("report.md", "9.999<em>x</em>"), ("report.html", "9.999&#120;"), ("report.html", "9.999<em>x</em>"),
    ("report.html", "9.99<span>9</span>x"), ("report.md", "9.999\u200bx"),
    # another times sign, or the ratio in words, is read as a ratio too
    ("report.md", "9.999\u00d7"), ("report.html", "9.999&#215;"), ("report.md", "9.999 \u00d7"),
    ("report.md", "9.999X"), ("report.md", "9.999\u0445"), ("report.md", "9.999-fold"),
    ("report.html", "9.999 times"),
])
def test_a_ratio_written_with_an_entity_or_inline_markup_is_read_as_shown(tmp_path, page, written):
    root = copy_committed_set(tmp_path, SHORT)
    _edit(root, page, "= 1.719x (n = 2", f"= {written} (n = 2")
    problems = verify(root).problems()
    assert f"derived: reports/{SHORT}/{page}: the ratio 9.999x in its text is in none of its tables, which are " \
           "checked against the evidence: does not match the evidence" in problems, problems


def test_a_ratio_given_for_a_comparison_after_another_is_named(tmp_path):
    root = copy_committed_set(tmp_path, SYNC)
    _edit(root, "report.md", "`n2_shared` / `n2_shared_nosync` = 0.648x", "`n2_shared` / `n2_shared_nosync` = 1.199x")
    problems = verify(root).problems()
    assert problems == [f"derived: reports/{SYNC}/report.md: its text gives n2_shared / n2_shared_nosync as 1.199x, "
                        "its tables 0.648x (a ratio of another comparison?): does not match the evidence"], problems


@pytest.mark.parametrize("name", [SYNC, SHORT, "h200x1", "h200x2", "h200x1_ref"])
def test_the_committed_pages_ratios_are_those_of_their_comparisons(tmp_path, name):
    assert verify(copy_committed_set(tmp_path, name)).ok


def _rehash(root) -> None:
    """MANIFEST.sha256 and manifest.json made again over the files it lists, as they are now."""
    import hashlib
    import json

    from sacscale.evidence.manifest import summary

    lines, entries = [], []
    for line in (root / "MANIFEST.sha256").read_text().splitlines():
        _, name = line.split(None, 1)
        digest = hashlib.sha256((root / name).read_bytes()).hexdigest()
        lines.append(f"{digest}  {name}")
        entries.append((digest, name, (root / name).stat().st_size))
    text = "\n".join(lines) + "\n"
    (root / "MANIFEST.sha256").write_text(text)
    (root / "manifest.json").write_text(json.dumps(summary(entries, text)))


@pytest.mark.parametrize("folder", ["h200x1_shared_long", "H200x1_shared_short"])
def test_a_set_copied_under_another_name_is_named(tmp_path, folder):
    """Another set's evidence under this folder's name, its runs' model paths edited to the
    new folder and the manifest made again: every record still names the other set."""
    import shutil

    copy = copy_committed_set(tmp_path, SHORT)
    root = copy.parent / folder
    copy.rename(root)
    shutil.move(report_file(copy, ""), report_file(root, ""))
    for path in [*root.glob("runs/*/run.json"), *root.glob("runs/*/train_meta.json"), *root.glob("eval/*.json")]:
        path.write_text(path.read_text().replace(f"results/{SHORT}/", f"results/{folder}/"))
    _rehash(root)
    problems = verify(root).problems()
    assert problems[0] == (f"record: plan.json: the set is recorded as {SHORT!r}, its folder is {folder!r}: another "
                           "set's evidence copied or renamed (its report and records speak of that set)"), problems
    # the kept policy's own settings still name the other set's model: the edit is named there too
    assert problems[1:] == [f"record: shared_r1_n1_pool7: train_meta.json config.model 'results/{folder}/model/"
                            "g1_walk_flat.mjb' (as the other records), but the run's hashed checkpoints/final.pt "
                            f"holds train_config.model 'results/{SHORT}/model/g1_walk_flat.mjb'"], problems


@pytest.mark.parametrize("key, other, says", [
    ("run_set", "h200x1_shared", "run set: plan.json says 'h200x1_shared_short', run.json resolved_config says "
                                 "'h200x1_shared'"),
])
def test_a_run_whose_record_names_another_set_is_named(tmp_path, key, other, says):
    """A run of another set put in this one (the model path edited, everything derived made
    again by the pipeline) still records the set it was planned for."""
    import json

    root = copy_committed_set(tmp_path, SHORT)
    path = root / "runs" / "shared_r1_n1_pool7" / "run.json"
    record = json.loads(path.read_text())
    record["resolved_config"][key] = other
    path.write_text(json.dumps(record, indent=2) + "\n")
    _rehash(root)
    problems = verify(root).problems()
    assert problems == [f"record: shared_r1_n1_pool7: {says}"], problems


def test_runs_whose_windows_do_not_follow_the_execution_order_are_named(tmp_path):
    """The plan's order and the runs' windows disagree, the summary's copy of the order and
    the manifest made to match: one run was trained at another time than its place says
    (a run of another set, or another sitting, put here under that place's name); the
    report made again by the project's own command."""
    import json

    root = copy_committed_set(tmp_path, SHORT)
    for name in ("plan.json", "summary.json"):
        path = root / name
        record = json.loads(path.read_text())
        holder = record if name == "plan.json" else record["meta"]
        order = holder["execution_order"]
        order[0], order[1] = order[1], order[0]
        path.write_text(json.dumps(record, indent=2) + "\n")
    _rehash(root)
    from sacscale.cli import main

    assert main(["report", "--run-set", str(root)]) == 0  # the pages made again by the report stage
    problems = verify(root).problems()
    assert "record: shared_r1_n1_pool7: ran as run 1 of this set (run.json's window), plan.json's execution order " \
           "has shared_r1_n2_shared there: a run trained at another time or for another set" in problems, problems


def test_a_paragraph_far_longer_than_the_report_writes_is_named_not_rendered(tmp_path):
    """Python-Markdown's time grows with the square of a paragraph full of escapes: 460 KB
    of them appended to report.md made verify take 34 s (2 MB: many minutes, 64 MB: days)."""
    import sacscale.report.text as text

    root = copy_committed_set(tmp_path, SHORT)
    page = report_file(root, "report.md")
    escaped = "".join(text.plain("<b>x</b>|`" * 200) for _ in range(110))  # each call cut at 2,000 characters
    page.write_text(page.read_text() + "\n\n" + escaped + "\n")
    problems = verify(root).problems()
    assert problems == [f"derived: reports/{SHORT}/report.md: a paragraph of {len(escaped) + 1:,} characters, far "
                        "longer than the report stage writes (at most 131,072 read here): not rendered, so not "
                        "checked: does not match the evidence"], problems
