"""The recorded environment's text fields that the page shows as they are (the lscpu table,
the learner module's path, cuDNN's version), held to what verify-env writes there: a
sentence put into one of them ("Two GPUs give a 9.9x speed-up over one") verified and
showed on the page."""

from __future__ import annotations

import re

from sacscale.evidence.shared_facts import ABSENT, opt

LSCPU_COLUMNS = ("CPU", "CORE", "SOCKET", "NODE")  # verify-env records `lscpu -e=CPU,CORE,SOCKET,NODE`
_ROW = re.compile(r"\d+(?:[ \t]+(?:\d+|-))*")  # a CPU's id, then numbers or lscpu's '-' (offline, no NUMA)
LEARNER_MODULE = "/sacscale/learn/learner.py"  # where the imported learner module lives in any install


def environment_text_findings(env: dict, strict: bool) -> tuple[list[str], list[str]]:
    """(problems, notes): each shown text field that is not what verify-env writes; in an
    older set (not `strict`) notes, as its writer may have differed."""
    found = [p for p in (_layout_problem(opt(env, "cpu", "layout")), _learner_file_problem(opt(env, "learner", "file")),
                         _cudnn_problem(opt(env, "torch", "cudnn"))) if p]
    return (found, []) if strict else ([], [f"{p} (an older set: not checked)" for p in found])


def _layout_problem(layout) -> str | None:
    if layout is ABSENT or layout is None or layout == "":
        return None
    lines = [line.strip() for line in str(layout).splitlines() if line.strip()]
    header = lines[0].split() if lines else []
    if not isinstance(layout, str) or not header or set(header) - set(LSCPU_COLUMNS) or len(set(header)) < len(header):
        return f"environment.json: cpu.layout does not start with lscpu's header ({' '.join(LSCPU_COLUMNS)})"
    row = next((n for n, line in enumerate(lines[1:], start=2)
                if not _ROW.fullmatch(line) or len(line.split()) != len(header)), None)
    if row is not None:
        return (f"environment.json: cpu.layout line {row} is not a row of lscpu's table ({len(header)} numbers or "
                f"'-'): {lines[row - 1][:60]!r}")
    return None


def _learner_file_problem(path) -> str | None:
    if path is ABSENT or path is None:
        return None
    if not isinstance(path, str) or not path.endswith(LEARNER_MODULE) or not path.isprintable():
        return (f"environment.json: learner.file {str(path)[:60]!r} is not the path of the learner module "
                f"({LEARNER_MODULE})")
    return None


def _cudnn_problem(version) -> str | None:
    if version is ABSENT or version is None or (type(version) is int and version >= 0):
        return None
    return f"environment.json: torch.cudnn {str(version)[:60]!r} is not cuDNN's version number"
