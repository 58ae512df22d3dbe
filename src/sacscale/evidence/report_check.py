"""The report's numbers against the evidence; its whole page where the set records this
code's page format (sacscale.evidence.report_page).

The quantities the report's tables show (sacscale.report.numbers) are recomputed from the
evidence (the runs' metrics and the summary recomputed before this). Where the report
stage wrote them (`reports/S/numbers.json`), that file is compared with them number by
number, each within its kind's tolerance (TOLERANCES). Then every table a renderer shows of
`report.md` (sacscale.report.shown: HTML comments and hidden elements are not read) that
has the header of one of these tables is read cell by cell: each number a cell shows must
be its quantity rounded to the decimals shown. Rows are found by the names in their first
cells; every row a table prints must be there, and a row the evidence does not give is a
problem. A set made before the report wrote numbers.json (none of the committed sets of
that time has one) is checked the same way, against the recomputed quantities only; its
report may lack the tables added after it was written (a note), never the configuration,
ratio, per-run or seed-shaped tables.
"""

from __future__ import annotations

import math
import re
import unicodedata
from pathlib import Path

from sacscale.reading import loads_record
from sacscale.evidence.after_manifest import PENDING_REPORT_CHECK
from sacscale.evidence.result import OLDER, EvidenceStructureError, Verification, read_text
from sacscale.report.figure_names import FIGURES, drawn_as
from sacscale.report.names import NUMBERS_NAME
from sacscale.report.numbers import FORMAT, report_numbers
from sacscale.evidence.report_html import presentation_problems, rendered_markdown_problems
from sacscale.evidence.report_environment import environment_problems, expected_environment
from sacscale.evidence.best_video import best_video_problems, unwritten_keys
from sacscale.evidence.planned_video import rendered_checkpoint_findings, unplanned_video_findings
from sacscale.evidence.report_files import report_folder_findings
from sacscale.evidence.report_page import whole_page_problems
from sacscale.evidence.prose_figures import Composed, composed_figures, prose_figure_problems
from sacscale.evidence.report_tables import other_tables_problems, regenerated
from sacscale.evidence.scope import PAGE_KEY, SCOPE_FILE, report_page_of
from sacscale.evidence.set_made import numbers_expected
from sacscale.evidence.set_root import reports_dir
from sacscale.report.page_format import PAGE_FORMAT, PAGE_FORMATS_WRITTEN
from sacscale.report.shown import ShownTable, long_paragraph, shown_numbers, shown_page, shown_view, shows
from sacscale.report.text import BLANK_LETTERS

# (relative, absolute) tolerance of a stored number against its recomputation, per kind.
# Everything is recomputed deterministically from the same events (the bootstrap has a
# fixed seed), so a float differs only by summation order: counts must be equal.
TOLERANCES = {
    "count": (0.0, 0.0),        # runs, repeats, iterations, events, steps
    "rate": (1e-9, 1e-12),      # env steps/s
    "ratio": (1e-9, 1e-12),     # ratios, their spread and intervals, efficiencies
    "seconds": (1e-9, 1e-12),   # wall time, event span, measurement window, time to quality
    "steps": (1e-9, 1e-12),     # mean env steps to a threshold
    "episode": (1e-9, 1e-12),   # final episode return and length
}
# tables every report of a pipeline-made set has had since the first
ALWAYS = ("seed", "configurations", "ratios", "runs")
# ... and every report of a set of the current plan format (schedule recorded)
CURRENT = ("intervals", "windows")


def report_expected(root: Path) -> bool:
    """A set the pipeline finished has a report: it made summary.json (hashed) and the report
    is made from it. Its absence is then a problem, not a skipped check."""
    return (root / "plan.json").is_file() and (root / "summary.json").is_file()


def check_report_present(root: Path, result: Verification, report_pending: bool) -> bool:
    """Whether reports/S/report.md is there to be checked; a missing report of a set that has
    one is a problem. `report_pending`: the pipeline's own verification, which runs before
    the report is written (the report embeds its verdict)."""
    reports = reports_dir(root)
    if reports is not None and (reports / "report.md").is_file():
        return True
    if not report_expected(root):
        return False
    where = f"reports/{root.name}/report.md" if reports is not None else (
        f"the report (the set lies in {root.parent}, not in a results/ folder beside reports/)")
    if report_pending:
        result.notes.append(f"{where}: not checked: the pipeline writes it after this verification")
        result.report_check = PENDING_REPORT_CHECK
    else:
        result.missing.append(f"{where} (the set's summary.json has a report: it was deleted, or the pipeline "
                              f"never got to write it)")
    return False


# --- numbers.json against the recomputation ------------------------------------------------------

def _close(stored, recomputed, kind: str) -> bool:
    if stored is None or recomputed is None:
        return stored is None and recomputed is None
    if isinstance(stored, bool) or not isinstance(stored, (int, float)):
        return False
    rel, abs_ = TOLERANCES.get(kind, TOLERANCES["ratio"])
    if math.isnan(stored) or math.isnan(recomputed):
        return math.isnan(stored) and math.isnan(recomputed)
    return math.isclose(stored, recomputed, rel_tol=rel, abs_tol=abs_)


def _row_differences(where: str, stored: dict, fresh: dict, kinds: dict) -> list[str]:
    if not isinstance(stored, dict):
        return [f"{where}: not a row"]
    problems = [f"{where}: {part} {stored.get(part)!r}, recomputed {fresh[part]!r}"
                for part in ("key", "shown", "withheld") if stored.get(part) != fresh[part]]
    cells = stored.get("cells") if isinstance(stored.get("cells"), dict) else {}
    if set(cells) != set(fresh["cells"]):
        problems.append(f"{where}: columns {sorted(cells)}, recomputed {sorted(fresh['cells'])}")
    for column, values in fresh["cells"].items():
        held = cells.get(column)
        if not isinstance(held, list) or len(held) != len(values):
            problems.append(f"{where}, {column}: stored {held!r}, recomputed {values!r}")
            continue
        problems += [f"{where}, {column}[{i}]: stored {a!r}, recomputed {b!r} ({kinds[column]}: tolerance "
                     f"relative {TOLERANCES.get(kinds[column], TOLERANCES['ratio'])[0]:g})"
                     for i, (a, b) in enumerate(zip(held, values)) if not _close(a, b, kinds[column])]
    return problems


def _table_differences(rel: str, name: str, stored, fresh: dict) -> list[str]:
    if not isinstance(stored, dict) or not isinstance(stored.get("rows"), list):
        return [f"{rel}: table {name}: not a table"]
    problems = [f"{rel}: table {name}: {part} {stored.get(part)!r}, recomputed {fresh[part]!r}"
                for part in ("header", "kinds") if stored.get(part) != fresh[part]]
    if len(stored["rows"]) != len(fresh["rows"]):
        return problems + [f"{rel}: table {name}: {len(stored['rows'])} rows stored, {len(fresh['rows'])} recomputed"]
    for i, (a, b) in enumerate(zip(stored["rows"], fresh["rows"])):
        problems += _row_differences(f"{rel}: table {name}, row {i + 1} ({' | '.join(b['key'])})", a, b, fresh["kinds"])
    return problems


def in_stored_words(stored, fresh: dict) -> dict:
    """`fresh` with each table's columns named as the stored numbers file names them,
    column by column, where both have as many columns: a header reworded since the set was
    made is no difference (verify reads numbers, not words); the values, their kinds and
    the column order are still compared, and a column may not take another column's name."""
    if not isinstance(stored, dict) or not isinstance(stored.get("tables"), dict):
        return fresh
    tables = {}
    for name, table in fresh["tables"].items():
        held = stored["tables"].get(name)
        header = held.get("header") if isinstance(held, dict) else None
        if (not isinstance(header, list) or len(header) != len(table["header"])
                or not all(isinstance(h, str) for h in header) or len(set(header)) != len(header)
                or any(h in table["header"] and h != c for h, c in zip(header, table["header"]))):
            tables[name] = table
            continue
        word = dict(zip(table["header"], header))
        tables[name] = {**table, "header": list(header),
                        "kinds": {word[c]: k for c, k in table["kinds"].items()},
                        "rows": [{**r, "cells": {word[c]: v for c, v in r["cells"].items()},
                                  "withheld": [word[c] for c in r["withheld"]]} for r in table["rows"]]}
    return {**fresh, "tables": tables}


def numbers_differences(rel: str, stored, fresh: dict) -> list[str]:
    """Every number of a stored numbers.json against the recomputed one, by kind."""
    if (not isinstance(stored, dict) or type(stored.get("format")) is not int or stored["format"] != FORMAT
            or not isinstance(stored.get("tables"), dict)):  # the writer's integer: not true, not 1.0
        return [f"{rel}: not a numbers file of format {FORMAT}"]
    problems = unwritten_keys(rel, stored, ("format", "tables"), "the report stage")
    problems += [f"{rel}: table {name}: stored, but not derived from the evidence"
                 for name in stored["tables"] if name not in fresh["tables"]]
    for name, table in fresh["tables"].items():
        if name not in stored["tables"]:
            problems.append(f"{rel}: table {name}: missing (the evidence gives it)")
            continue
        problems += _table_differences(rel, name, stored["tables"][name], table)
    return problems


# --- report.md's tables against the quantities ---------------------------------------------------

def _names(cells: list[str]) -> list[str]:
    """A row's naming cells as a sorted list of words, conditions in brackets left out
    (a seed-table row may name its pair in either order, with its repeat counts)."""
    return sorted(re.sub(r"\([^)]*\)", " ", " ".join(cells)).split())


def _cell_problem(cell: str, values: list, withheld: bool) -> str | None:
    numbers = shown_numbers(cell)
    if withheld and not numbers and cell.startswith("not shown"):
        return None  # an interval over too few repeats, left out on purpose
    if len(numbers) == len(values) and all(shows(n, q) for n, q in zip(numbers, values)):
        return None
    gives = ", ".join("n/a" if q is None else f"{q:,.6g}" for q in values) or "no number"
    return f"shows {cell!r}, the evidence gives {gives}"


_BLANK_LETTER = re.compile(f"[{BLANK_LETTERS}]")


def _invisible(cell: str) -> str | None:
    """A character a cell shows as nothing or that reorders what follows (U+202E shows
    '1.719x' as 'x917.1'): none of the report stage's cells holds one."""
    for ch in cell:
        # a space other than the two the stage writes: U+1680 is drawn as a dash
        odd_space = unicodedata.category(ch) in ("Zs", "Zl", "Zp") and ch not in " \u00a0"
        if unicodedata.category(ch) in ("Cc", "Cf", "Co", "Cs", "Cn") or _BLANK_LETTER.fullmatch(ch) or odd_space:
            return f"holds an invisible or reordering character ({ch.encode('unicode_escape').decode()!s})"
    return None


def _row_problems(where: str, header: list[str], cells: list[str], row: dict) -> list[str]:
    problems = [f"{where}: {hidden}: does not match the evidence" for hidden in map(_invisible, cells) if hidden][:1]
    for column, cell in zip(header[len(row["key"]):], cells[len(row["key"]):]):
        if column in row["cells"]:
            problem = _cell_problem(cell, row["cells"][column], column in row["withheld"])
            if problem:
                problems.append(f"{where}, column {column!r}: {problem}: does not match the evidence")
    return problems


def table_problems(rel: str, shown: ShownTable, table: dict) -> tuple[list[str], int]:
    """One shown table against its quantities: every row's numbers, rows it lacks or adds;
    and how many numbers it holds."""
    rows = {tuple(_names(r["key"])): r for r in table["rows"]}
    found = set()
    problems = []
    for cells in [r for r in shown.rows if any(r)]:  # an empty table renders one blank row
        width = len(table["rows"][0]["key"]) if table["rows"] else 1
        label = " | ".join(cells[:width])
        row = rows.get(tuple(_names(cells[:width])))
        where = f"{rel}: {table['title']}, row {label!r}"
        if row is None or len(cells) != len(shown.header):
            problems.append(f"{where}: not a row the evidence gives: does not match the evidence")
            continue
        found.add(id(row))
        problems += _row_problems(where, shown.header, cells, row)
    problems += [f"{rel}: {table['title']}: no row {' | '.join(r['key'])!r}: does not match the evidence"
                 for r in table["rows"] if r["shown"] and id(r) not in found]
    return problems, sum(len(v) for r in table["rows"] if id(r) in found for v in r["cells"].values())


# a ratio as the report writes one (1.719x), or as a reader would read one written with
# another times sign (x, X, the multiplication sign, a cross, a Cyrillic letter that looks
# like x) or in words (-fold, times); the headline sentences repeat the tables' ratios
_RATIO = re.compile(r"(?<![\d.])(\d+\.\d{3})\s*"
                    r"(?:[xX\u00d7\u2715\u2716\u2a09\u2a2f\u0445\u0425](?!\w)|-?fold\b|\s+times\b)")


def _ratios(text: str) -> list[str]:
    """The ratios `text` shows, each written as the report writes one (`1.719x`)."""
    return [f"{number}x" for number in _RATIO.findall(text)]


# two configurations compared, as the sentences and the tables' first column name them
_PAIR = re.compile(r"([\w.-]+) / ([\w.-]+)")
_HIDDEN = re.compile("[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff" + BLANK_LETTERS + "]")


def _ratios_by_pair(shown: list[ShownTable]) -> dict[tuple[str, str], set[str]]:
    """The ratios each table row shows, by the two configurations its first cell compares."""
    pairs: dict[tuple[str, str], set[str]] = {}
    for row in (row for table in shown for row in table.rows if row):
        pair = _PAIR.match(row[0])
        if pair:
            pairs.setdefault(pair.groups(), set()).update(r for cell in row[1:] for r in _ratios(cell))
    return pairs


def prose_ratio_problems(rel: str, prose: str, shown: list[ShownTable]) -> list[str]:
    """A ratio in the page's visible text (the at-a-glance line, the claim's verdict) that no
    table shows, or that the tables show for another comparison than the one the sentence
    names just before it (`A / B = 1.719x`): the tables are checked cell by cell against
    the evidence, the sentences only against the tables. The text is read as a browser
    shows it: `9.999&#120;` or `9.999<em>x</em>` is 9.999x."""
    in_tables = {ratio for table in shown for row in table.rows for cell in row for ratio in _ratios(cell)}
    by_pair = _ratios_by_pair(shown)
    problems = []
    for line in _HIDDEN.sub("", prose).splitlines():
        pairs = list(_PAIR.finditer(line))
        for found in _RATIO.finditer(line):
            before = [p.groups() for p in pairs if p.end() <= found.start()]
            pair = before[-1] if before else None
            ratio = f"{found[1]}x"
            if ratio not in in_tables:
                problems.append(f"{rel}: the ratio {ratio} in its text is in none of its tables, which are checked "
                                "against the evidence: does not match the evidence")
            elif pair in by_pair and ratio not in by_pair[pair]:
                shown_for = ", ".join(sorted(by_pair[pair])) or "no ratio"
                problems.append(f"{rel}: its text gives {' / '.join(pair)} as {ratio}, its tables {shown_for} "
                                "(a ratio of another comparison?): does not match the evidence")
    return list(dict.fromkeys(problems))


def tables_problems(rel: str, text: str, numbers: dict, required: set[str], html: bool = False,
                    made: dict | None = None, environment: list[str] | None = None,
                    stated: Composed | None = None) -> tuple[list[str], list[str], str]:
    """(problems, notes, what was read) of a report's Markdown (or `html`) against the
    quantities its tables show; with `made` (report_tables.regenerated), its other tables too;
    with `environment` (the lines the set's record gives), its Environment list; with `stated`
    (the figures of the page composed again), every figure of its text."""
    by_header = {tuple(t["header"]): (name, t) for name, t in numbers["tables"].items()}
    problems, seen, count = [], set(), 0
    shown_list, prose = shown_page(text, html)
    problems += prose_ratio_problems(rel, prose, shown_list) + environment_problems(rel, prose, environment)
    if stated is not None:
        problems += prose_figure_problems(rel, text, _HIDDEN.sub("", prose).splitlines(), numbers, stated)
    if made is not None:
        problems += other_tables_problems(rel, shown_list, set(by_header), made)
    for shown in shown_list:
        match = by_header.get(tuple(shown.header))
        if match is not None:
            seen.add(match[0])
            found, numbers_read = table_problems(rel, shown, match[1])
            problems += found
            count += numbers_read
    notes = []
    for name, table in numbers["tables"].items():
        if name in seen:
            continue
        if name in required:
            problems.append(f"{rel}: {table['title']} is not shown (no table with its header): does not match "
                            "the evidence")
        else:
            notes.append(f"{rel}: {table['title']}: {OLDER}")
    return problems, notes, f"{count} numbers in {len(seen)} tables"


def check_report(root: Path, summary: dict, metrics: list[dict], result: Verification, current: bool = True,
                 plan: dict | None = None) -> None:
    """The report's numbers (numbers.json, where the report stage wrote one, and report.md's
    tables) against the quantities recomputed from the evidence; result.report_check says
    which way."""
    reports = reports_dir(root)
    if reports is None or not (reports / "report.md").is_file():
        return
    rel = f"reports/{root.name}"
    fresh = report_numbers(summary, metrics)
    stored_path = reports / NUMBERS_NAME
    if stored_path.is_file():
        try:
            stored = loads_record(read_text(stored_path, f"{rel}/{NUMBERS_NAME}"))
        except EvidenceStructureError as exc:
            stored = exc
        except ValueError as exc:
            stored = EvidenceStructureError(f"{rel}/{NUMBERS_NAME}: not valid JSON ({exc})")
        fresh = in_stored_words(stored, fresh)  # report.md is then read in the words it was written in
        result.derived += (numbers_differences(f"{rel}/{NUMBERS_NAME}", stored, fresh)
                           if not isinstance(stored, Exception) else [str(stored)])
        required = set(fresh["tables"])
        result.report_check = (f"report: {rel}/{NUMBERS_NAME} compared number by number with the quantities "
                               f"recomputed from the evidence; report.md's tables checked cell by cell against them")
        result.checked.append(f"{rel}/{NUMBERS_NAME}")
    else:
        required = set(ALWAYS + (CURRENT if current else ()))
        if marks := numbers_expected(root, plan):
            result.derived.append(f"{rel}: no {NUMBERS_NAME}, which the report stage writes with every page; "
                                  f"{' and '.join(marks)} {'say' if len(marks) > 1 else 'says'} the set was made after "
                                  "it began to")
        result.report_check = (f"report: no {NUMBERS_NAME} (a set made before the report wrote one): report.md's "
                               f"tables parsed and checked cell by cell against the quantities recomputed from the "
                               f"evidence")
    made = regenerated(root, metrics)
    environment, unshowable = expected_environment(root)
    result.derived += unshowable
    try:
        text = read_text(reports / "report.md", f"{rel}/report.md", errors="replace")
    except EvidenceStructureError as exc:
        result.derived.append(str(exc))
        return
    stated = figures_stated(root, reports, rel, text, result)
    if (too_long := long_paragraph(text)) is not None:
        result.derived.append(f"{rel}/report.md: {too_long}: not rendered, so not checked: does not match the "
                              "evidence")
    else:
        problems, notes, read = tables_problems(f"{rel}/report.md", text, fresh, required, made=made,
                                                environment=environment, stated=stated)
        result.report_check += f" ({read})"
        result.derived += problems + rendered_markdown_problems(f"{rel}/report.md", text)
        result.notes += notes
        result.checked.append(f"{rel}/report.md")
    result.derived += figure_name_problems(rel, reports)
    result.derived += best_video_problems(root, reports, rel)
    for findings in (unplanned_video_findings, rendered_checkpoint_findings):
        problems, notes = findings(root, reports, rel)
        result.derived += problems
        result.notes += notes
    check_report_html(reports, rel, fresh, required, result, made, environment, stated)
    check_whole_page(root, reports, rel, result)
    problems, notes = report_folder_findings(reports, rel)
    result.derived += problems
    result.notes += notes


def figures_stated(root: Path, reports: Path, rel: str, text: str, result: Verification) -> Composed | None:
    """Where the page is not compared whole (a set made before sets recorded their page
    format), the figures the page composed again from its evidence states, against which the
    pages' own are read (sacscale.evidence.prose_figures); None where it is compared whole."""
    page, _ = report_page_of(root)
    if page in PAGE_FORMATS_WRITTEN or (page is not None and page > PAGE_FORMAT) or long_paragraph(text):
        return None
    stated = composed_figures(root, reports, shown_view(text, html=False).lines, PAGE_FORMAT)
    if stated is None:
        result.notes.append(f"{rel}: the figures its text states are not checked: its page cannot be composed again "
                            "from the evidence (a record the checks above name)")
    return stated


def check_whole_page(root: Path, reports: Path, rel: str, result: Verification) -> None:
    """Both pages against the page composed again from the evidence, where the set's report
    stage wrote this code's page format; otherwise a note says what is not compared."""
    page, problem = report_page_of(root)
    result.scope += [problem] if problem else []
    if page is not None and page > PAGE_FORMAT:  # as the evidence format: no format this code knows
        result.scope.append(f"{SCOPE_FILE}: {PAGE_KEY} {page}, newer than this code's page format ({PAGE_FORMAT}): "
                            "verify the set with the code that made it")
        return
    if page not in PAGE_FORMATS_WRITTEN:
        why = (f"written by the report stage's page format {page}, this code's is {PAGE_FORMAT}" if page else
               f"a set made before sets recorded their page format ({SCOPE_FILE} {PAGE_KEY})")
        result.notes.append(f"{rel}: the page outside its tables, the figures its text states, its Environment list "
                            f"and its figures is not compared with the page its evidence gives: {why}")
        return
    pages = {}
    for name in ("report.md", "report.html"):
        try:
            pages[name] = read_text(reports / name, f"{rel}/{name}", errors="replace")
        except EvidenceStructureError:
            continue  # named by the checks above
    if "report.md" in pages and long_paragraph(pages["report.md"]) is not None:
        return  # likewise
    problems, notes = whole_page_problems(root, reports, rel, pages, page)
    result.derived += problems
    result.notes += notes
    result.report_check += "; both pages compared line by line with the page composed again from the evidence"


def figure_name_problems(rel: str, reports: Path) -> list[str]:
    """Each figure is the one drawn under its name: a figure that carries another's name
    (two swapped, one copied over another) is named; in a set whose figures carry names,
    one without is too (sets made before figures carried them have none)."""
    drawn = {name: drawn_as(reports / "figures" / name) for name in sorted(FIGURES.values())
             if (reports / "figures" / name).is_file()}
    problems = [f"{rel}/figures/{name}: is the figure the report stage drew as {was[:60]!r} (swapped or "
                "copied over?): does not match the evidence" for name, was in drawn.items() if was and was != name]
    if any(drawn.values()):
        problems += [f"{rel}/figures/{name}: carries no figure name, as every other figure of the set does: does not "
                     "match the evidence" for name, was in drawn.items() if was is None]
    return problems


def check_report_html(reports: Path, rel: str, fresh: dict, required: set[str], result: Verification,
                      made: dict | None = None, environment: list[str] | None = None,
                      stated: Composed | None = None) -> None:
    """report.html, which readers open: its visible tables cell by cell as report.md's, and
    nothing in it that could show other numbers (sacscale.evidence.report_html)."""
    page = reports / "report.html"
    if not page.is_file():
        result.derived.append(f"{rel}/report.html: missing (the report stage writes it with report.md)")
        return
    try:
        text = read_text(page, f"{rel}/report.html", errors="replace")
    except EvidenceStructureError as exc:
        result.derived.append(str(exc))
        return
    problems, _, read = tables_problems(f"{rel}/report.html", text, fresh, required, html=True, made=made,
                                        environment=environment, stated=stated)
    result.derived += problems + presentation_problems(f"{rel}/report.html", text, reports)
    result.report_check += f"; report.html's tables checked the same way ({read})"
    result.checked.append(f"{rel}/report.html")
