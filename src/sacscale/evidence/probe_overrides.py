"""correctness.json's `learner_overrides`: the learner settings (SACConfig values) that the
probe used in place of the trained networks' (sacscale.parallel.probe_settings
ProbeSettings.learner). Only the probe's own tests pass them; `sacscale probe correctness`
has no option for them, so the probe the pipeline runs records none. The report shows the
field as it is, so a record that holds one (a sentence in it, or smaller networks than the
trained ones) is named: a problem in a set of the current evidence format, else a note."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from sacscale.evidence.result import EvidenceStructureError, load_json
from sacscale.learn.config import SACConfig

NAME = "correctness.json"
_SETTINGS = {f.name: f.default for f in dataclasses.fields(SACConfig)}


def _kind_fits(default, value) -> bool:
    """A JSON value of the setting's kind (its default's; a tuple is a JSON list of numbers)."""
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(default, bool) and isinstance(value, bool)
    if isinstance(default, tuple):
        return isinstance(value, list) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
    if isinstance(default, float):
        return isinstance(value, (int, float))
    if default is None or isinstance(default, int):
        return isinstance(value, int) or (default is None and value is None)
    return isinstance(value, type(default))


def _setting_problems(overrides: dict) -> list[str]:
    return [f"learner_overrides: {str(key)[:40]!r} is not a learner setting (sacscale.learn.config.SACConfig)"
            if key not in _SETTINGS else
            f"learner_overrides: {key} {json.dumps(value)[:40]} is not a value of the setting's kind "
            f"(its default is {json.dumps(_SETTINGS[key])})"
            for key, value in overrides.items() if key not in _SETTINGS or not _kind_fits(_SETTINGS[key], value)]


def override_problems(record: dict) -> list[str]:
    """Each thing wrong with the record's learner_overrides (none where it holds none)."""
    if "learner_overrides" not in record:
        return []
    overrides = record["learner_overrides"]
    if not isinstance(overrides, dict):
        return [f"learner_overrides: {json.dumps(overrides)[:60]} is not an object of learner settings"]
    return _setting_problems(overrides) + [
        f"learner_overrides {json.dumps(overrides)[:60]}, but the probe command the pipeline runs passes none "
        "(it probes the networks that are trained)"]


def learner_override_findings(root: Path, current: bool) -> tuple[list[str], list[str]]:
    """(problems, notes) of the set's correctness.json learner_overrides: problems in a set of
    the current evidence format (`current`), else notes."""
    if not (root / NAME).is_file():
        return [], []
    try:
        record = load_json(root, NAME)
    except EvidenceStructureError:
        return [], []  # named by sacscale.evidence.probe_record
    found = [f"{NAME}: {line}" for line in override_problems(record)] if isinstance(record, dict) else []
    return (found, []) if current else ([], [f"{line} (an older set: not checked)" for line in found])
