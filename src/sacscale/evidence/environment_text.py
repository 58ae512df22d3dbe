"""The recorded environment's text fields that the page shows as they are (the lscpu table,
the learner module's path or its import error, cuDNN's, CUDA's and NCCL's versions), held
to what verify-env writes there: a sentence put into one of them ("Two GPUs give a 9.9x
speed-up over one") verified and showed on the page."""

from __future__ import annotations

import re

from sacscale.evidence.shared_facts import ABSENT, opt
from sacscale.evidence.written_keys import environment_keys

LSCPU_COLUMNS = ("CPU", "CORE", "SOCKET", "NODE")  # verify-env records `lscpu -e=CPU,CORE,SOCKET,NODE`
# a CPU's id, then numbers or lscpu's '-' (offline, no NUMA); ASCII digits, as lscpu prints (\d takes any script's)
_ROW = re.compile(r"[0-9]+(?:[ \t]+(?:[0-9]+|-))*")
LEARNER_MODULE = "/sacscale/learn/learner.py"  # where the imported learner module lives in any install
# torch.version.cuda ("13.0"); NCCL's version joined by dots ("2.28.9"; a build's suffix: "2.27.3.+cuda12.9",
# a pre-release's, as NCCL's makefiles name one: "2.28.9.~a0"); ASCII digits only
_VERSION = re.compile(r"[0-9]+(?:\.[0-9]+)*(?:\.\+(?:cuda|rocm)[0-9]+(?:\.[0-9]+)*|\.~[a-z]+[0-9]+)?")
# torch.backends.cudnn.version(): cuDNN's MAJOR*10000 + MINOR*100 + PATCH (91900 for 9.19.0; MAJOR*1000 before
# cuDNN 9), MIOpen's on ROCm MAJOR*1000000 + MINOR*1000 + PATCH: below this for any major version under 100
CUDNN_BOUND = 100_000_000


def environment_text_findings(env: dict, strict: bool) -> tuple[list[str], list[str]]:
    """(problems, notes): each shown text field that is not what verify-env writes; in an
    older set (not `strict`) notes, as its writer may have differed."""
    found = _form_problems(env) + [p for p in (_learner_import_problem(opt(env, "learner")),) if p]
    return (found, []) if strict else ([], [f"{p} (an older set: not checked)" for p in found])


def recorded_value_problems(env: dict) -> list[str]:
    """What verify refuses in a current set's environment.json, asked by verify-env of the record
    it is about to write, so that a value verify would refuse stops the pipeline before any run
    trains, not after all of them: the shown text fields' forms and the recorded variables'
    settings (an unusable learner is verify-env's own --require-graph-hooks stop)."""
    return _form_problems(env) + environment_keys(env)


def _form_problems(env: dict) -> list[str]:
    return [p for p in (_layout_problem(opt(env, "cpu", "layout")), _learner_file_problem(opt(env, "learner", "file")),
                        _cudnn_problem(opt(env, "torch", "cudnn")),
                        _version_problem(opt(env, "torch", "cuda"), "torch.cuda", "CUDA"),
                        _version_problem(opt(env, "torch", "nccl"), "torch.nccl", "NCCL")) if p]


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
    # the module's __file__: an absolute path (a folder's name may hold spaces)
    if (not isinstance(path, str) or not path.startswith("/") or not path.endswith(LEARNER_MODULE)
            or not path.isprintable()):
        return (f"environment.json: learner.file {str(path)[:60]!r} is not the path of the learner module "
                f"(an absolute path ending in {LEARNER_MODULE})")
    return None


def _learner_import_problem(learner) -> str | None:
    """The page shows learner.error where learner.file is null. verify-env records an error
    only where the learner cannot be used, and the pipeline's verify-env (--require-graph-hooks)
    stops there, so no run of the set trained with it."""
    if not isinstance(learner, dict):
        return None
    error, path = learner.get("error"), learner.get("file", ABSENT)
    if path is not None and error is None:
        return None
    said = f"learner.error {str(error)[:60]!r}" if error is not None else "no learner.error"
    return (f"environment.json: learner.file {'is null' if path is None else 'is given'} and {said}: the learner "
            "module was not usable, and the pipeline stops there (verify-env --require-graph-hooks), so no run "
            "of this set trained with it")


def _version_problem(version, key: str, what: str) -> str | None:
    if version is ABSENT or version is None or (isinstance(version, str) and _VERSION.fullmatch(version)):
        return None
    return f"environment.json: {key} {str(version)[:60]!r} is not {what}'s version (numbers joined by dots)"


def _cudnn_problem(version) -> str | None:
    if version is ABSENT or version is None or (type(version) is int and 0 <= version < CUDNN_BOUND):
        return None
    return (f"environment.json: torch.cudnn {str(version)[:60]!r} is not cuDNN's version number (a whole number "
            f"below {CUDNN_BOUND:,})")
