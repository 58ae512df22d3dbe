"""The report's whole page against the page its evidence gives.

For a set whose report was written by a report stage of this code's page format
(evidence.json `report_page`, sacscale.report.page_format), the page is composed again from
the set's own files with the report stage's own code (sacscale.report.set_inputs, build),
without drawing its figures, and what a reader sees of report.md and report.html is
compared with it line by line: the verdict and the probe's section, every sentence,
heading, caption, table row and code block. Two inputs are not evidence and are taken as
the page has them where the checkout lacks them: the list of failed attempts (kept under
logs/, which a copy of the set does not carry) and the link to the deviations document.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

from sacscale.analysis.events import EventFileError
from sacscale.pipeline.run_folder_names import SET_ASIDE_AS, STAMP_PATTERN
from sacscale.report.build import ATTEMPTS_INTRO, DEVIATIONS_TITLE, build, link_from, read_inputs
from sacscale.report.record_error import RecordError
from sacscale.report.document import to_html, to_markdown
from sacscale.report.set_inputs import set_inputs
from sacscale.report.shown import shown_view

_STAMP = f"-{STAMP_PATTERN}"
DEVIATIONS_NAME = "deviations.md"
SHOWN_AT_MOST = 3  # differences named per page; the rest are counted


def _cut(line: str, start: int = 0) -> str:
    """The line from a little before `start`, at most 160 characters of it."""
    start = max(0, start - 40)
    part = line[start:start + 160]
    return repr(("..." if start else "") + part + ("..." if start + 160 < len(line) else ""))


def _first_difference(a: str, b: str) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def differences(rel: str, expected: list[str], shown: list[str]) -> list[str]:
    """Each run of lines where the page shows other than the evidence gives, named by its
    first line; after SHOWN_AT_MOST, one line counting the rest."""
    if len(shown) > 10 * len(expected) + 1000:  # far more than the stage writes: not diffed line by line
        return [f"{rel}: shows {len(shown):,} lines of text, the page its evidence gives {len(expected):,}: does "
                "not match the evidence"]
    found = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=expected, b=shown, autojunk=False).get_opcodes():
        if tag == "replace":
            at = _first_difference(shown[j1], expected[i1])
            found.append(f"shows {_cut(shown[j1], at)} where the evidence gives {_cut(expected[i1], at)}")
        elif tag == "delete":
            found.append(f"does not show {_cut(expected[i1])}, which the evidence gives")
        elif tag == "insert":
            found.append(f"shows {_cut(shown[j1])}, which the evidence does not give")
    problems = [f"{rel}: {what}: does not match the evidence" for what in found[:SHOWN_AT_MOST]]
    if len(found) > SHOWN_AT_MOST:
        problems.append(f"{rel}: {len(found) - SHOWN_AT_MOST} more passage(s) differ from the page its evidence "
                        "gives: does not match the evidence")
    return problems


def page_attempts(lines: list[str], runs: list[str]) -> list[str]:
    """The attempts the page's line lists, where it is the report stage's line as the run
    wrapper names them (`<run>.<why>-<time>`, set aside again: `.superseded-<time>`), of this
    set's runs only; none otherwise."""
    run = "|".join(re.escape(r) for r in runs)
    name = f"(?:{run})\\.(?:{'|'.join(SET_ASIDE_AS)}){_STAMP}(?:\\.superseded{_STAMP})?"
    for line in lines:
        if runs and re.fullmatch(f"{re.escape(ATTEMPTS_INTRO)}{name}(?:, {name})*\\.", line):
            return line.removeprefix(ATTEMPTS_INTRO).removesuffix(".").split(", ")
    return []


def _composed(root: Path, reports: Path, page_lines: list[str], page_format: int):
    """(the report's Document from the set's files, whether its attempts are here). Where the
    checkout lacks them, the deviations link as the checkout would hold it and the attempts
    the page lists, in the stage's own shape."""
    paths = set_inputs(root, reports)
    runs = [Path(p).stem for p in paths["metrics_paths"]]  # the planned runs, in the plan's order
    summary, metrics, others = read_inputs(paths.pop("summary_path"), paths.pop("metrics_paths"), reports, **paths)
    if others["deviations"] is None and DEVIATIONS_TITLE in page_lines:
        others["deviations"] = link_from(reports, root.parent.parent / "docs" / DEVIATIONS_NAME)
    if not paths["attempts"]:
        others["attempts"] = page_attempts(page_lines, runs)
    return (build(summary, metrics, reports / "figures", reports, draw=False, page_format=page_format, **others),
            bool(paths["attempts"]))


def composed_lines(root: Path, reports: Path, md_lines: list[str], page_format: int) -> list[str]:
    """The lines a reader sees of report.md as composed again from the set's files."""
    return shown_view(to_markdown(_composed(root, reports, md_lines, page_format)[0]), html=False).lines


def whole_page_problems(root: Path, reports: Path, rel: str, pages: dict[str, str],
                        page_format: int) -> tuple[list[str], list[str]]:
    """(problems, notes) of the pages ({'report.md': text, 'report.html': text}) against
    the page composed from the evidence: what a reader sees, then where its links and images
    lead; report.md, which this code writes byte for byte, also as its Markdown."""
    seen = {name: shown_view(text, html=name == "report.html") for name, text in pages.items()}
    md_lines = seen["report.md"].lines if "report.md" in seen else []
    try:
        doc, attempts_here = _composed(root, reports, md_lines, page_format)
    except (RecordError, OSError) as exc:  # a record missing or unreadable: named by the checks before
        return [f"{rel}: its page cannot be composed again from the evidence ({exc}): does not match the "
                "evidence"], []
    except EventFileError as exc:  # a run's events the learning curves read (its metrics check names them too)
        return [f"{rel}: its page cannot be composed again from the evidence: a run's events cannot be read "
                f"({exc}): does not match the evidence"], []
    notes = [] if attempts_here else [
        f"{rel}: the list of failed attempts is taken as the page gives it: logs/{root.name}/attempts holds none "
        "here (logs are not evidence)"]
    problems = []
    for name, text in pages.items():
        html = name == "report.html"
        composed = to_html(doc, reports, embed_images=False) if html else to_markdown(doc)
        expected, shown = shown_view(composed, html), seen[name]
        found = differences(f"{rel}/{name}", expected.lines, shown.lines)
        found += differences(f"{rel}/{name}", expected.links, shown.links)
        if not found:  # the same words; drawn in the same blocks (a caveat in a scrolled <pre>, a <th>)?
            found = differences(f"{rel}/{name} (its blocks)", expected.blocks, shown.blocks)
        if not found and not html:  # the same to this renderer; another (GitHub's) may show the difference
            found = differences(f"{rel}/{name} (its Markdown source)", composed.split("\n"), text.split("\n"))
        problems += found
    return problems, notes
