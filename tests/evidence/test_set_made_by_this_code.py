"""Whether a set was made by this code (so its checks are strict) was read from the plan's
`schedule` alone: deleted from plan.json, environment.json's plan and summary.json's meta, it
turned an extra page beside the report into a note "(a report made by earlier code)". The
set's other marks of this code (evidence.json's format and page format, the report's
numbers.json, the plan's evaluation size) now decide it with the schedule, and a set whose
marks disagree is named."""

import json

from set_copies import edit_record, remake_manifest, report_file

from sacscale.evidence.verify import verify
from sacscale.report.build import write_report
from sacscale.report.page_format import PAGE_FORMAT
from sacscale.report.set_inputs import set_inputs


def _without_schedule(root):
    """The set's schedule deleted everywhere it is recorded; manifest and page made again."""
    plan = json.loads((root / "plan.json").read_text())
    del plan["schedule"]
    (root / "plan.json").write_text(json.dumps(plan, indent=1))
    edit_record(root, "environment.json", lambda env: env["plan"].pop("schedule"))
    edit_record(root, "summary.json", lambda summary: summary["meta"].pop("schedule"))
    remake_manifest(root)
    reports = report_file(root, "")
    write_report(output_md=reports / "report.md", output_html=reports / "report.html",
                 figures_dir=reports / "figures", **set_inputs(root, reports))


def test_a_set_without_its_schedule_is_named(work):
    _without_schedule(work)
    assert (f"record: plan.json: no schedule, which the pipeline writes into every plan since 2026-12-01; yet "
            f"evidence.json format 2, evidence.json report_page {PAGE_FORMAT}, reports/{work.name}/numbers.json, "
            "plan.json evaluation say the set was made by this code") in verify(work).problems()


def test_a_page_beside_the_report_stays_a_problem_without_the_schedule(work):
    _without_schedule(work)
    report_file(work, "README.md").write_text("# verified\n\nSpeed-up 9.9x (n = 50), audited.\n")
    assert (f"derived: reports/{work.name}: README.md: not a file the report stage writes there (report.md, "
            "report.html, numbers.json, figures/), so nothing checks what it says") in verify(work).problems()
