"""What verification found (Verification), and the helpers every check shares: reading a
JSON evidence file of the expected shape, comparing a stored value with its recomputation."""

from __future__ import annotations

import json
import math
import numbers
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from sacscale.number_kinds import is_number
from sacscale.reading import TooLarge, loads_record, read_limited

REL_TOL = 1e-9
OLDER = "not recorded by this older set"
AGAIN = "verify again when nothing writes the set"


class EvidenceStructureError(ValueError):
    """A JSON evidence file of the wrong shape; the message names the file and the field."""


class OutOfMemoryLoading(Exception):
    """verify ran out of memory loading its own code (a module imported on the way): a fault of
    the machine's memory, not of the set, which was not judged."""


def while_loading(exc: MemoryError) -> str | None:
    """The module being loaded where the MemoryError was raised, or None where none was."""
    # a module's top level on the way (the import machinery's own frames are left out of
    # tracebacks): the innermost is the one being loaded
    modules = [f for f in traceback.extract_tb(exc.__traceback__) if f.name == "<module>"]
    return Path(modules[-1].filename).stem if modules else None


def out_of_memory_loading(module: str) -> OutOfMemoryLoading:
    return OutOfMemoryLoading(f"verify ran out of memory loading its own code (importing {module}) before it had "
                              "judged the set; free memory (or raise the limit) and run it again")


@dataclass
class Verification:
    root: str
    files_checked: int = 0
    bytes_hashed: int = 0
    runs_checked: int = 0
    refused: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    # files whose identity changed between verify's first read and its last (read_identity)
    changed_while_read: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    metrics: list[str] = field(default_factory=list)
    records: list[str] = field(default_factory=list)
    derived: list[str] = field(default_factory=list)
    structure: list[str] = field(default_factory=list)
    scope: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    covered: list[str] = field(default_factory=list)  # what is hashed, what is left out by design
    report_check: str = ""  # how the report's numbers were checked (one line)

    @property
    def ok(self) -> bool:
        return not (self.refused or self.changed or self.changed_while_read or self.missing or self.extra
                    or self.metrics or self.records or self.derived or self.structure or self.scope)

    def problems(self) -> list[str]:
        return (
            [f"refused: {p}" for p in self.refused]
            + [f"changed while verify read it: {p} ({AGAIN})" for p in self.changed_while_read]
            + [f"changed: {p}" for p in self.changed]
            + [f"missing: {p}" for p in self.missing]
            + [f"extra: {p} (not in the manifest)" for p in self.extra]
            + [f"metric: {p}" for p in self.metrics]
            + [f"record: {p}" for p in self.records]
            + [f"derived: {p}" for p in self.derived]
            + [f"structure: {p}" for p in self.structure]
            + [f"scope: {p}" for p in self.scope]
        )

    def as_dict(self) -> dict:
        return {
            "root": self.root,
            "ok": self.ok,
            "files_checked": self.files_checked,
            "runs_checked": self.runs_checked,
            "checked": self.checked,
            "refused": self.refused,
            "changed": self.changed + [f"{p} (changed while verify read it; {AGAIN})" for p in self.changed_while_read],
            "missing": self.missing,
            "extra": self.extra,
            "metrics": self.metrics,
            "records": self.records,
            "derived": self.derived,
            "structure": self.structure,
            "scope": self.scope,
            "notes": self.notes,
            "covered": self.covered,
            "report_check": self.report_check,
        }


# --- reading -----------------------------------------------------------------------------

def _root_of(path: Path, rel: str) -> Path | None:
    """The folder `path` is `rel` in, when `rel` names its last parts."""
    parts = Path(rel).parts
    if parts and ".." not in parts and Path(path).parts[-len(parts):] == parts:
        return Path(*Path(path).parts[:-len(parts)]) if len(Path(path).parts) > len(parts) else Path(".")
    return None


def read_text(path: Path, rel: str, errors: str = "strict") -> str:
    """The UTF-8 text of an evidence file (whatever the locale says), bounded;
    EvidenceStructureError naming `rel` otherwise. The folders from the set's root down (the
    path less `rel`) and the file itself are opened without following a link: one swapped in
    after verify's walk is refused, not followed."""
    try:
        return read_limited(path, within=_root_of(path, rel)).decode("utf-8", errors=errors)
    except FileNotFoundError:
        raise EvidenceStructureError(f"{rel}: missing") from None
    except TooLarge as exc:
        raise EvidenceStructureError(f"{rel}: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise EvidenceStructureError(f"{rel}: not valid JSON ({exc})" if rel.endswith(".json")
                                     else f"{rel}: cannot read it ({exc})") from None


def load_json(root: Path, rel: str, kind: type = dict):
    """The JSON value of root/rel, which must be a `kind`; EvidenceStructureError otherwise."""
    try:
        data = loads_record(read_text(root / rel, rel))
    except json.JSONDecodeError as exc:
        raise EvidenceStructureError(f"{rel}: not valid JSON ({exc})") from None
    if not isinstance(data, kind):
        raise EvidenceStructureError(f"{rel}: not a JSON {kind.__name__} (a {type(data).__name__})")
    return data


def get_field(data: dict, rel: str, *keys, kind: type | tuple = object):
    """data[k1][k2]... of the right type, or EvidenceStructureError naming file and field."""
    value = data
    for i, key in enumerate(keys):
        if not isinstance(value, dict) or key not in value:
            raise EvidenceStructureError(f"{rel}: no field {'.'.join(map(str, keys[: i + 1]))}")
        value = value[key]
    if not isinstance(value, kind):
        raise EvidenceStructureError(f"{rel}: field {'.'.join(map(str, keys))} is a {type(value).__name__}")
    return value


# --- comparing -----------------------------------------------------------------------------

def _kind(value) -> str:
    """A value's JSON kind: a flag (bool) is not a count (int), nor a count a measure (float),
    though Python finds True == 1 == 1.0; a tuple the code builds is a JSON list."""
    if isinstance(value, bool) or type(value).__name__ == "bool_":  # numpy's flag is no Integral
        return "bool"
    if isinstance(value, numbers.Integral):
        return "int"
    if isinstance(value, numbers.Real):
        return "float"
    if isinstance(value, (list, tuple)):
        return "list"
    return "dict" if isinstance(value, dict) else type(value).__name__


def same_value(a, b) -> bool:
    """A recorded value is the one derived for it: equal, and of the same JSON kind at every
    level (json.dumps writes a float as a float, 180.0, so a record holding 180 where the code
    writes a float, or 1 for true, was not written by it)."""
    if _kind(a) != _kind(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    return a == b


def deep_differences(stored, recomputed, path: str = "") -> tuple[list[str], list[str]]:
    """(problems, notes) between a stored and a recomputed JSON value: every field, numbers
    equal up to float noise; a field only the recomputation has is a note (older set)."""
    problems: list[str] = []
    notes: list[str] = []
    where = path or "(top level)"
    if stored is None and isinstance(recomputed, float) and not math.isfinite(recomputed):
        return problems, notes  # records hold no NaN or inf: their writer stores null (sacscale.atomic)
    if isinstance(stored, dict) and isinstance(recomputed, dict):
        for key in recomputed:
            sub = f"{path}.{key}" if path else str(key)
            if key not in stored:
                notes.append(f"{sub}: {OLDER}")
                continue
            p, n = deep_differences(stored[key], recomputed[key], sub)
            problems += p
            notes += n
        for key in stored:
            if key not in recomputed:
                problems.append(f"{path + '.' if path else ''}{key}: stored, but not derived from the evidence")
    elif isinstance(stored, list) and isinstance(recomputed, list):
        if len(stored) != len(recomputed):
            problems.append(f"{where}: stored {len(stored)} entries, recomputed {len(recomputed)}")
        else:
            for i, (a, b) in enumerate(zip(stored, recomputed)):
                p, n = deep_differences(a, b, f"{path}[{i}]")
                problems += p
                notes += n
    elif is_number(stored) and is_number(recomputed):
        a, b = float(stored), float(recomputed)
        same = (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=REL_TOL, abs_tol=1e-12)
        if not same or _kind(stored) != _kind(recomputed):
            problems.append(f"{where}: stored {stored!r}, recomputed {recomputed!r}")
    elif not same_value(stored, recomputed):
        problems.append(f"{where}: stored {_short(stored)}, recomputed {_short(recomputed)}")
    return problems, notes


def _short(value) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 120 else text[:117] + "..."


def split_notes(result: Verification, notes: list[str], strict: bool, target: list[str]) -> None:
    """Notes of fields an older set never recorded; problems (in `target`) for a current set."""
    (target if strict else result.notes).extend(notes)
