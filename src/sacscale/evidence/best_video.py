"""The report's choice of the run it shows on video against the set's evaluations.

`sacscale render-best` records its choice beside the video (reports/S/figures/best_run.json)
after the manifest, so no hash binds it, and the report's video caption is written from it.
The choice is made again here from the set's hashed evaluations by the same rule
(sacscale.eval.best): the run, its score and figures and every run's score must be the ones
the evaluations give. The video itself is not rendered again (that takes the policy, MuJoCo
and a GL backend).
"""

from __future__ import annotations

from pathlib import Path

from sacscale.eval.best import best_run
from sacscale.evidence.result import EvidenceStructureError, load_json, read_text
from sacscale.reading import loads_record
from sacscale.report.set_inputs import planned_runs

RECORD = Path("figures") / "best_run.json"
CHOICE = ("run", "score", "tracking_lin", "tracking_yaw", "fall_rate", "env_steps", "scores", "rule")


def _evaluations(root: Path, runs: list[str]) -> dict[str, dict]:
    return {run: load_json(root, f"eval/{run}.json") for run in runs if (root / "eval" / f"{run}.json").is_file()}


def best_video_problems(root: Path, reports: Path, rel: str) -> list[str]:
    """Each field of the recorded choice that the evaluations of the planned runs (in the
    plan's order, which breaks ties) do not give."""
    where = f"{rel}/{RECORD.as_posix()}"
    if not (reports / RECORD).is_file():
        return []
    try:
        stored = loads_record(read_text(reports / RECORD, where))
        evaluations = _evaluations(root, planned_runs(root))
    except (EvidenceStructureError, ValueError) as exc:  # RecordError is a ValueError
        return [f"{where}: cannot be checked ({exc}): does not match the evidence"]
    if not isinstance(stored, dict):
        return [f"{where}: not a record of a choice: does not match the evidence"]
    try:
        fresh = best_run(evaluations)
    except (ValueError, KeyError, TypeError) as exc:  # no evaluations, or one of another shape (named elsewhere)
        return [f"{where}: the set's evaluations give no choice ({type(exc).__name__}: {exc}): does not match the "
                "evidence"]
    return [f"{where}: {key} {str(stored.get(key))[:80]}, the set's evaluations give {str(fresh[key])[:80]}: does "
            "not match the evidence" for key in CHOICE if stored.get(key) != fresh[key]]
