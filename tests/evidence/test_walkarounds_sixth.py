"""Walk-arounds of `sacscale verify` of the sixth hardening pass: a sparse file of GBs in a
set made before the size budget (no budget to name it by: it was hashed, about 1 s a GB)."""

import time

from sacscale.evidence.verify import verify
from set_copies import copy_committed_set

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
    import subprocess
    import sys
    argv = ["manifest", str(root), "--output", str(root / "MANIFEST.sha256"), "--json", str(root / "manifest.json")]
    subprocess.run([sys.executable, "-m", "sacscale.cli", *argv], check=True, capture_output=True)


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
