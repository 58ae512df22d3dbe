"""The tables of a report other than the ones numbers.json holds: each must be a table the
report stage writes, and the ones made from the evidence alone are regenerated and compared
cell by cell.

numbers.json's tables (sacscale.evidence.report_check) are checked number by number. The
report shows other tables too: the per-phase times (from the runs' metrics) and the
evaluation's tracking errors (from eval/*.json), which are regenerated here with the report
stage's own code and must show the same text; the seed's figures, the probe's tensors, the
environment's and the deviations' tables, whose headers are listed below. A table with any
other header (one appended with numbers of its own, a raw `<table>` in report.md) is a
problem: verify cannot say where its numbers come from.
"""

from __future__ import annotations

import re
from pathlib import Path

from sacscale.report import tables
from sacscale.report.document import Document, to_markdown
from sacscale.report.shown import ShownTable, shown_tables
from sacscale.reading import loads_record, read_limited

# headers of the tables the report stage writes whose numbers are not the evidence's own
# (constants, the probe's record, the environment, docs/deviations.md), in every committed
# report's wording; a new table of the stage needs its header here (tests/evidence checks
# every committed report against this list: test_committed_bundles verifies each)
KNOWN_HEADERS = {tuple(h.split(" | ")) for h in (
    "# | what | now (the reference's) | before",
    "configuration (3 runs each) | 1-GPU steps/s | 2-GPU steps/s | ratio",
    "configuration | threshold | reached | env steps (mean) | seconds (mean)",
    "configuration | trainer | env steps/s (mean) | std | n | physics share | final episode length | "
    "env steps to length 950 | lin-vel tracking (end) | yaw tracking (end)",
    "envs | threads | physics env steps/s, wall | physics per CPU-s | full env steps/s, wall | full per CPU-s | "
    "non-physics share of a full step",
    "key | file",
    "model | env steps/s, five rounds | median",
    "run | config | env steps (all ranks) | lin-vel tracking | yaw-rate tracking",
    "tensor | max_abs_diff | scale | max_rel_diff | norm_rel_diff | criterion | rel_diff | tolerance | pass | judged",
    "tensor | max_abs_diff | scale | max_rel_diff | tolerance | pass | judged",
    "what | spec | ours | ref | pub | read in | why / effect",
    "what | spec | ours | ref | pub (holosoma) | read in | why / effect",
)}
_PHASE = re.compile(r"[a-z][a-z0-9_]*", re.ASCII)


def regenerated(root: Path, metrics: list[dict]) -> dict[tuple, tuple[str, ShownTable]]:
    """{header: (title, table as shown)} of the tables the report stage makes from the runs'
    metrics and evaluations, made again by its own code."""
    evaluations = {}
    for m in metrics:
        path = root / "eval" / f"{m.get('run')}.json"
        if path.is_file():
            evaluations[m["run"]] = loads_record(read_limited(path, within=root).decode("utf-8"))
    made = {"the phase-time table": tables.phase_table(metrics),
            "the evaluation table": tables.quality_table(evaluations, metrics)}
    out = {}
    for title, table in made.items():
        if table is not None:
            shown = shown_tables(to_markdown(Document("", [table])))[0]
            out[tuple(shown.header)] = (title, shown)
    return out


def _phase_like(header: tuple) -> bool:
    return header[:3] == ("configuration", "rank", "runs") and all(_PHASE.fullmatch(h) for h in header[3:])


def other_tables_problems(rel: str, shown: list[ShownTable], checked: set[tuple],
                          made: dict[tuple, tuple[str, ShownTable]]) -> list[str]:
    """Every shown table not among `checked` (numbers.json's headers): a regenerated one
    must show what was made again, any other must have a header the report stage writes."""
    problems = []
    for table in shown:
        header = tuple(table.header)
        if header in checked:
            continue
        if header in made:
            title, fresh = made[header]
            problems += _text_differences(f"{rel}: {title}", table, fresh)
        elif header not in KNOWN_HEADERS and not _phase_like(header):
            problems.append(f"{rel}: a table the report stage does not write (header {' | '.join(header)[:80]!r}): "
                            "its numbers come from nowhere verify knows: does not match the evidence")
    return problems


def _text_differences(where: str, shown: ShownTable, fresh: ShownTable) -> list[str]:
    rows = [r for r in shown.rows if any(r)]
    if len(rows) != len(fresh.rows):
        return [f"{where}: {len(rows)} rows shown, the evidence gives {len(fresh.rows)}: does not match the evidence"]
    for i, (row, want) in enumerate(zip(rows, fresh.rows)):
        for column, cell, cell_want in zip(fresh.header, row, want):
            if cell != cell_want:
                return [f"{where}, row {i + 1}, column {column!r}: shows {cell[:40]!r}, the evidence gives "
                        f"{cell_want[:40]!r}: does not match the evidence"]
    return []
