"""The figures a report's text states, where the page is not compared whole.

A set made before sets recorded their page format was written by an older report stage
whose page this code cannot compose again word for word (sacscale.evidence.report_page), so
its sentences are not compared with the evidence. Each figure they state still is: a
number written as a ratio (`1.7x`, `9.9x`, `10 times`, `2-fold`), a percentage (`86%`, `86
percent`) or a rate (`42,000 env steps/s`, `42k env-steps/sec`, `42,000 sps`) must be, at the
precision it is written with (`42k`: to the thousand), one of the set's:
a quantity of its tables recomputed from the evidence (a ratio or efficiency for the first
two, a rate for the third), or a figure the page composed again from the evidence states (the
stage's own text: the seed's `1.7x to 2.4x`, the rank multiple, `95%`). The ratios with the
report's three decimals are read by report_check.prose_ratio_problems, which also ties each
to the comparison its sentence names. The copy of the deviations document older pages carry
is a document, not evidence: its figures are not read. The text is read as its reader reads
it: compatibility forms made plain (NFKC), so fullwidth digits and signs are figures too.
Only numbers written with a unit are figures: an older page's own words hold counts (ranks,
seeds, steps) that are no quantity of its tables.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from sacscale.analysis.events import EventFileError
from sacscale.evidence.report_page import composed_lines
from sacscale.report.record_error import RecordError
from sacscale.report.shown import ShownNumber, shows

_TIMES = "xX\u00d7\u2715\u2716\u2a09\u2a2f\u0445\u0425"
_NUMBER = r"(?<![\w.,])(?P<num>[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.(?P<dec>[0-9]+))?"
# a magnitude written after the number (`45k env steps/s`, `1.2 million steps/s`)
_MAGNITUDE = r"(?:(?P<mag>[kKM](?![A-Za-z])|\s*(?:thousand|million)\b))?"
MAGNITUDES = {"k": 3, "thousand": 3, "m": 6, "million": 6}
_PERCENT = r"%|per\s?cent\b|pct\b"
# env steps per second, however spelled: `steps/s`, `env-steps/sec`, `steps per second`, `sps`
_RATE = r"(?:env(?:ironment)?[\s-]*)?steps?\s*(?:/|\bper\s+)\s*(?:s|secs?|seconds?)\b|sps\b"
FIGURE = re.compile(_NUMBER + _MAGNITUDE + r"\s*(?:(?P<ratio>[" + _TIMES + r"](?!\w)|-?fold\b|(?<=\s)times\b)"
                    r"|(?P<percent>" + _PERCENT + r")|(?P<rate>" + _RATE + r"))", re.IGNORECASE)
# where an older page's copy of the deviations document begins and the stage's own text resumes
DEVIATIONS_COPY = ("Deviations from the reference system", "Limitations")


def shown_text(line: str) -> str:
    """A line as its reader reads its figures: compatibility forms made plain (NFKC: a
    fullwidth `９３％` is `93%`, a no-break space a space)."""
    return unicodedata.normalize("NFKC", line)


def _kind(found: re.Match) -> str:
    return "ratio" if found["ratio"] is not None else "percent" if found["percent"] else "rate"


def _power(found: re.Match) -> int:
    """The power of ten a magnitude word or suffix (`k`, `million`) multiplies the number by."""
    return MAGNITUDES[found["mag"].strip().lower()] if found["mag"] else 0


def _written(found: re.Match) -> str:
    """The figure's number as written, its thousands' commas left out, its magnitude kept."""
    number = found["num"].replace(",", "") + (f".{found['dec']}" if found["dec"] else "")
    return number + (f"e{_power(found)}" if found["mag"] else "")


def _number(found: re.Match) -> ShownNumber:
    """The figure's value, precise to its last written place (`45k`: to the thousand)."""
    power = _power(found)
    value = float(found["num"].replace(",", "") + (f".{found['dec']}" if found["dec"] else "")) * 10 ** power
    return ShownNumber(value, len(found["dec"] or "") - power, found["percent"] is not None)


@dataclass(frozen=True)
class Composed:
    """What the page composed again from the evidence states: its figures, each (kind, the
    number as written) with how often, and its lines."""
    figures: Counter
    lines: frozenset[str]


def composed_of(lines: list[str]) -> Composed:
    return Composed(Counter((_kind(f), _written(f)) for line in lines for f in FIGURE.finditer(shown_text(line))),
                    frozenset(lines))


def _quantities(numbers: dict) -> dict[str, list[float]]:
    """The set's quantities by the kind of figure that may state them: a ratio or an
    efficiency (as `x` or `%`), a rate (as env steps/s)."""
    out: dict[str, list[float]] = {"ratio": [], "percent": [], "rate": []}
    for table in numbers["tables"].values():
        for row in table["rows"]:
            for column, values in row["cells"].items():
                kind = table["kinds"].get(column)
                for value in (v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)):
                    if kind == "ratio":
                        out["ratio"].append(value)
                        out["percent"].append(value)
                    elif kind == "rate":
                        out["rate"].append(value)
    return out


def _own_lines(lines: list[str], composed: set[str]) -> list[str]:
    """The page's lines but those of its copy of the deviations document: from its one
    heading to the next `Limitations`, holding no line of the page composed again (a heading
    moved above the stage's own text does not hide it)."""
    start, end = DEVIATIONS_COPY
    if lines.count(start) != 1:
        return lines
    first = lines.index(start)
    last = next((i for i in range(first + 1, len(lines)) if lines[i] == end), len(lines))
    if any(line in composed for line in lines[first + 1:last]):
        return lines
    return lines[:first] + lines[last:]


def _source_lines(source: str, found: re.Match) -> list[int]:
    """The lines of the page's file (from 1) that write the figure, markup between its
    number and its unit allowed."""
    written = re.escape(found["num"]) + (r"\." + found["dec"] if found["dec"] else "") + r"(?![0-9])"
    unit = f"(?:[%{_TIMES}]|-?fold|times|env|steps|per\\s?cent|pct|sps|[kM](?![a-z])|thousand|million|&#)"
    pattern = re.compile(r"(?<![\w.,])" + written + r"(?:\s|<[^>]*>|[*_\u200b-\u200f])*" + unit, re.IGNORECASE)
    return [number for number, line in enumerate(source.splitlines(), start=1) if pattern.search(shown_text(line))]


def _where(rel: str, lines: list[int]) -> str:
    if not lines:
        return rel
    return f"{rel} line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))}"


def prose_figure_problems(rel: str, source: str, lines: list[str], numbers: dict, composed: Composed) -> list[str]:
    """A figure in the page's text (its `lines`, read as shown; `source`, the file) that is
    none of the set's (`numbers`, the recomputed quantities; the figures of the page `composed`
    again from the evidence, each as often as it states it), named with the line of
    the file that writes it. A figure of the stage's own text (`100%`) written more often than
    the stage writes it is one a figure of the set was changed to."""
    quantities = _quantities(numbers)
    unexplained: dict[tuple[str, str], list[tuple[re.Match, str]]] = {}
    stated = composed.figures
    for line in map(shown_text, _own_lines(lines, composed.lines)):
        for found in FIGURE.finditer(line):
            kind = _kind(found)
            if kind == "ratio" and len(found["dec"] or "") == 3:
                continue  # as the report writes one: read with its comparison by prose_ratio_problems
            if not any(shows(_number(found), q) for q in quantities[kind]):
                unexplained.setdefault((kind, _written(found)), []).append((found, line))
    problems = []
    for (kind, written), seen in unexplained.items():
        if (kind, written) not in stated:
            problems += [f"{_where(rel, _source_lines(source, found)[:1])}: {found[0].strip()!r} (in "
                         f"{_excerpt(line, found.start())}) is no figure of this set's (no {_WHAT[kind]} of its "
                         "tables, recomputed from the evidence, nor of the text the report stage writes for it, rounds "
                         "to it): does not match the evidence" for found, line in seen]
        elif len(seen) > (often := stated[(kind, written)]):
            found = seen[0][0]
            problems.append(f"{_where(rel, _source_lines(source, found))}: {found[0].strip()!r} is written {len(seen)} "
                            f"times in its text, where the page its evidence gives writes it "
                            f"{'once' if often == 1 else f'{often} times'}, and is no {_WHAT[kind]} of its tables, "
                            "recomputed from the evidence (a figure of the set changed to one of the report stage's "
                            "own words?): does not match the evidence")
    return list(dict.fromkeys(problems))


_WHAT = {"ratio": "ratio", "percent": "ratio or efficiency", "rate": "rate"}


def _excerpt(line: str, at: int) -> str:
    start = max(0, at - 40)
    part = line[start:start + 100]
    return repr(("..." if start else "") + part + ("..." if start + 100 < len(line) else ""))


def composed_figures(root: Path, reports: Path, md_lines: list[str], page_format: int) -> Composed | None:
    """What the page composed again from the set's files (sacscale.evidence.report_page)
    states; None where it cannot be composed (a record missing: named by other checks)."""
    try:
        return composed_of(composed_lines(root, reports, md_lines, page_format))
    except (RecordError, OSError, EventFileError):
        return None
