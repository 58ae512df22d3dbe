"""The measured values of a run of either trainer, for the copy checks
(sacscale.evidence.copied_events): the reference trainer writes its events in its own layout
(sacscale.analysis.reference), one series for the run (its ranks' sums), so a copy of another
reference run's events, moved in time, is compared with the set's other runs as this
trainer's runs are."""

from __future__ import annotations

from pathlib import Path

from sacscale.analysis.events import EventFileError
from sacscale.analysis.reference import LOG_ROOT_NAME, is_reference_run, read_events, reference_log_root
from sacscale.evidence.copied_events import Values, copied_run_problems, measured_values, run_values


def reference_values(run_dir: Path) -> dict[int, Values]:
    """The reference run's measured values in our tags, as one rank ({} where its events
    cannot be read: the metrics check names why). Its steps are not iterations of one env
    step each (sacscale.analysis.reference), so none of its lengths follows from its step."""
    try:
        return {0: measured_values(read_events(reference_log_root(run_dir)), step_lengths=False)}
    except (EventFileError, OSError):
        return {}


def any_run_values(run_dir: Path, config=None) -> dict[int, Values]:
    """run_values of this trainer's run, reference_values of the reference trainer's."""
    return reference_values(run_dir) if _is_reference(run_dir) else run_values(run_dir, config)


def _is_reference(run_dir: Path) -> bool:
    try:
        return is_reference_run(run_dir)
    except EventFileError:
        return False


def copied_any_run_problems(by_run: dict[str, dict[int, Values]], runs_dir: Path) -> list[str]:
    """copied_run_problems, a reference run's one series named by its log root."""
    lines = copied_run_problems(by_run)
    for name in by_run:
        if _is_reference(runs_dir / name):
            lines = [line.replace(f"runs/{name} tb/rank0 ", f"runs/{name} {LOG_ROOT_NAME} ") for line in lines]
    return lines
