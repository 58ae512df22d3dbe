"""model.json against what it describes, as `sacscale prepare-model` writes it: `file` is the
set's hashed model (model/g1_walk_flat.mjb), `source.mjb` the file the plan took it from
(plan.json model.from_mjb), `summary` what sacscale.task.g1_model.model_summary gives for
the hashed .mjb loaded with MuJoCo (the function prepare-model wrote it with), and the
parts of `physics_cost` that follow from the others. The cost's rates and contact count
are a measurement that no other record holds (docs/evidence.md).

The recorded MuJoCo version is checked against the one the .mjb's header names (and, for
files whose header names none, the version it loads into here). The summary is derived
whenever the installed MuJoCo loads the file (a .mjb loads only into the version that
wrote it); where MuJoCo is missing or the file is of another version, verify says so where
its verdict is read, and the rest is still checked."""

from __future__ import annotations

import math
from pathlib import PurePosixPath

from sacscale.number_kinds import is_finite_number
from sacscale.evidence.mjb_header import saved_by
from sacscale.evidence.result import deep_differences, same_value
from sacscale.held_names import unheld_name_problem

MODEL_FILE = "g1_walk_flat.mjb"  # what prepare-model saves (sacscale.commands.prepare_model)


def name_problems(model: dict, plan: dict) -> list[str]:
    """`file` is the set's model file; `source.mjb` the name of the file the plan gave."""
    problems = []
    if "file" in model and model["file"] != MODEL_FILE:
        problems.append(f"model: model.json file {str(model['file'])[:60]!r}, the set's hashed model is "
                        f"model/{MODEL_FILE}")
    source = model.get("source") if isinstance(model.get("source"), dict) else {}
    given = (plan.get("model") or {}).get("from_mjb") if isinstance(plan.get("model"), dict) else None
    if "mjb" in source and isinstance(given, str) and source["mjb"] != PurePosixPath(given).name:
        problems.append(f"model: model.json source.mjb {str(source['mjb'])[:60]!r}, plan.json model.from_mjb "
                        f"is {given[:80]!r}")
    if "mjb" in source and not isinstance(given, str):
        problems.append(f"model: model.json source.mjb {str(source['mjb'])[:60]!r}, but plan.json gives no "
                        "model.from_mjb (prepare-model then builds the model from the asset package)")
    return problems


def cost_problems(model: dict) -> list[str]:
    """physics_cost's derived parts: the rate per thread is the rate over the threads, and
    the substeps are the summary's."""
    cost = model.get("physics_cost")
    if not isinstance(cost, dict):
        return []
    problems = []
    rate, per_thread, threads = cost.get("env_steps_per_s"), cost.get("env_steps_per_s_per_thread"), \
        cost.get("num_threads")
    if is_finite_number(rate) and is_finite_number(per_thread) and isinstance(threads, int) and threads >= 1 \
            and not math.isclose(per_thread, rate / threads, rel_tol=1e-9):
        problems.append(f"model: model.json physics_cost.env_steps_per_s_per_thread {per_thread!r}, but "
                        f"env_steps_per_s {rate!r} over {threads} thread(s) is {rate / threads!r}")
    opt = model.get("summary", {}).get("opt") if isinstance(model.get("summary"), dict) else None
    if "substeps" in cost and isinstance(opt, dict) and "substeps" in opt \
            and not same_value(cost["substeps"], opt["substeps"]):
        problems.append(f"model: model.json physics_cost.substeps {str(cost['substeps'])[:20]}, its "
                        f"summary.opt.substeps {str(opt['substeps'])[:20]}")
    return problems


def _version_problems(recorded, named: str | None) -> list[str]:
    """The version model.json records against the one the .mjb's header names."""
    if named is None or recorded is None or str(recorded) == named:
        return []
    return [f"model: model.json mujoco_version {str(recorded)[:20]!r}, but model/{MODEL_FILE}'s header says "
            f"MuJoCo {named} saved it"]


def _summary_of(path, named: str | None, recorded) -> tuple[dict | None, str | None, str | None, str | None]:
    """(model_summary of the .mjb, the MuJoCo version it loaded into, why it cannot be
    derived here, why the file is not the task's model): the first two, or one of the others."""
    try:
        from sacscale.mujoco_lib import mujoco
        from sacscale.task import g1_model
    except ImportError as exc:
        return None, None, f"MuJoCo cannot be imported here ({exc})", None
    installed = mujoco.__version__
    if named is not None and named != installed:
        return None, None, (f"its header says MuJoCo {named} saved it, MuJoCo {installed} is installed here "
                            "(a .mjb loads only into its own version)"), None
    try:
        return g1_model.model_summary(g1_model.load_model(path)), installed, None, None
    except (ValueError, KeyError, IndexError) as exc:  # MuJoCo's load error; a model without the task's parts
        if named is None and recorded is not None and str(recorded) != installed:
            return None, None, (f"MuJoCo {installed} is installed here, the model was saved by "
                                f"{str(recorded)[:20]} (model.json; the file's header names no version, and it "
                                "does not load here)"), None
        return None, None, None, f"{type(exc).__name__}: {str(exc)[:120]}"


def summary_findings(root, model: dict) -> tuple[list[str], list[str]]:
    """(problems, what was not derived): model.json summary against the hashed .mjb, and the
    version it records against the one the file names or loads into."""
    path = root / "model" / MODEL_FILE
    stored = model.get("summary")
    if not isinstance(stored, dict) or not path.is_file():
        return [], []
    if problem := unheld_name_problem(f"model/{MODEL_FILE}: its path", path):  # MuJoCo takes only text names
        return [f"model: {problem}"], []
    recorded, named = model.get("mujoco_version", stored.get("mujoco_version")), saved_by(path)
    problems = _version_problems(recorded, named)
    derived, loaded_into, not_here, unloadable = _summary_of(path, named, recorded)
    if not_here:
        return problems, [f"model.json summary: not derived from model/{MODEL_FILE}: {not_here}"]
    if unloadable:
        return problems + [f"model: model/{MODEL_FILE} does not load as the task's model ({unloadable})"], []
    if named is None and recorded is not None and str(recorded) != loaded_into:
        problems.append(f"model: model.json mujoco_version {str(recorded)[:20]!r}, but model/{MODEL_FILE} loads "
                        f"into MuJoCo {loaded_into} here (a .mjb loads only into the version that saved it)")
    differences, _ = deep_differences(stored, derived, "summary")
    return problems + [f"model: model.json {p.replace('recomputed', f'model/{MODEL_FILE} gives')}"
                       for p in differences], []
