"""Keys that a record's writer never writes, in the records the report shows field by field:
correctness.json (its comparison rows, its `trainer_path`), model.json and environment.json's
`env` (whose values the page shows too, so they are held to a setting's form). verify checks
the fields their writers write; a key added beside them (a sentence with a figure) would be
checked by nothing, so it is named. The report shows the written fields
only (sacscale.report.build), so such a key never reaches the page either.

In a set of the current evidence format (evidence.json) such a key is a problem; an older
set's writers may have written other keys, so there it is a note (the committed older sets
hold none)."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from sacscale.evidence.result import EvidenceStructureError, load_json
from sacscale.parallel.probe_settings import COMPARISON_FIELDS, PROBE_RECORD_FIELDS
from sacscale.parallel.topology import recorded_variable
from sacscale.train.probe_settings import TRAINER_RECORD_FIELDS
from sacscale.task.model_record import MODEL_RECORD_FIELDS

_UNCHECKED = "so nothing checks what it says"
MAX_SETTING = 4096  # the visible devices may list many GPU or MIG UUIDs (8 of them: 327 characters)
_SETTING = re.compile(r"[!-~]{0,%d}" % MAX_SETTING)  # ASCII with no space: a blank look-alike is no word break
# settings that name a file or folder may hold a space, as a path may; every other one is one word (but below)
_PATH_SETTING = re.compile(r"NCCL_[A-Z0-9_]*(?:FILE|PATH|DIR|PLUGIN)")
# a setting that names a network takes the name a plugin gives it, which may hold spaces (NCCL's own
# are IB and Socket; the aws-ofi-nccl plugin's is "AWS Libfabric"): short words joined by single spaces
_NAME_SETTINGS = frozenset({"NCCL_NET"})
MAX_NAME = 32
_NAME = re.compile(r"[!-~]+(?: [!-~]+)*")


def _shown(key: str) -> str:
    return repr(key[:60]) + ("..." if len(key) > 60 else "")


def _character(ch: str) -> str:
    """A character that is not printable (a no-break space, a tab), by its code point and its
    Unicode name, or its kind where it has none: the reason then says what it is."""
    named = unicodedata.name(ch, "") or _UNNAMED.get(unicodedata.category(ch), "")
    return f"U+{ord(ch):04X} {named}"


# the characters without a name that are not printable, by their Unicode category
_UNNAMED = {"Cc": "(a control character)", "Co": "(a private-use character)", "Cn": "(an unassigned code point)",
            "Cs": "(a lone surrogate)"}


def _extra_keys(record: dict, fields: tuple, where: str, writer: str) -> list[str]:
    return [f"{where}{_shown(key)}: not a field {writer} writes, {_UNCHECKED}" for key in record if key not in fields]


def _row_keys(record: dict, where: str) -> list[str]:
    rows = record.get("comparisons")
    if not isinstance(rows, list):
        return []  # its shape is named by sacscale.evidence.probe_record
    return [f"{where}comparison {i} ({str(row.get('tensor'))[:40]}): column {_shown(key)}: not one the probe "
            f"writes (sacscale.parallel.probe_settings.COMPARISON_FIELDS), {_UNCHECKED}"
            for i, row in enumerate(rows, 1) if isinstance(row, dict) for key in row if key not in COMPARISON_FIELDS]


def probe_keys(record: dict) -> list[str]:
    """correctness.json's keys, its rows' columns and its trainer path's, against the probe's."""
    found = _extra_keys(record, PROBE_RECORD_FIELDS, "",
                        "the probe (sacscale.parallel.probe_settings.PROBE_RECORD_FIELDS)") + _row_keys(record, "")
    trainer = record.get("trainer_path")
    if isinstance(trainer, dict):
        found += _extra_keys(trainer, TRAINER_RECORD_FIELDS, "trainer_path: ",
                             "the trainer-path probe (sacscale.train.probe_settings.TRAINER_RECORD_FIELDS)")
        found += _row_keys(trainer, "trainer_path: ")
    return found


def model_keys(record: dict) -> list[str]:
    return _extra_keys(record, MODEL_RECORD_FIELDS, "", f"prepare-model ({', '.join(MODEL_RECORD_FIELDS)})")


def environment_keys(record: dict) -> list[str]:
    """env's names against those verify-env records, and their values (the page shows each
    name=value) against a setting's form."""
    variables = record.get("env")
    if not isinstance(variables, dict):
        return []
    found = []
    for name, value in variables.items():
        if not recorded_variable(name):
            found.append(f"env {_shown(name)}: not a variable verify-env records (NCCL_[A-Z0-9_]+ and "
                         f"CUDA_VISIBLE_DEVICES), {_UNCHECKED}")
        elif problem := _value_problem(name, value):
            found.append(problem)
    return found


def _value_problem(name: str, value) -> str | None:
    # NCCL's settings and the visible devices are words, numbers, interface names, lists or paths
    if not isinstance(value, str) or len(value) > MAX_SETTING:
        return f"env {name}: {_shown(str(value))} is not a variable's setting (text of at most {MAX_SETTING} " \
               "characters)"
    if unprinted := next((ch for ch in value if not ch.isprintable()), None):
        return (f"env {name}: {_shown(value)} is not a variable's setting (printable text only, but it holds "
                f"{_character(unprinted)})")
    if _SETTING.fullmatch(value) or _PATH_SETTING.fullmatch(name):
        return None
    if name in _NAME_SETTINGS and len(value) <= MAX_NAME and _NAME.fullmatch(value):
        return None
    return (f"env {name}: {_shown(value)} is not a variable's setting (one word: no spaces, but in a setting "
            f"that names a file or folder, and single spaces between words in a network's name of at most "
            f"{MAX_NAME} characters, NCCL_NET)")


_CHECKS = (("correctness.json", probe_keys), ("model.json", model_keys), ("environment.json", environment_keys))


def unwritten_key_findings(root: Path, current: bool) -> tuple[list[str], list[str]]:
    """(problems, notes): each key of these records that their writers never write, as a
    problem in a set of the current evidence format (`current`), else as a note."""
    found = []
    for name, check in _CHECKS:
        if not (root / name).is_file():
            continue
        try:
            record = load_json(root, name)
        except EvidenceStructureError:
            continue  # named by the checks that read it
        if isinstance(record, dict):
            found += [f"{name}: {line}" for line in check(record)]
    if current:
        return found, []
    return [], [f"{line} (an older set: its writer may have written it, so not a problem)" for line in found]
