"""A run's events are held to the trainer's logged rates whatever its stored metrics say: the
check ran only where the stored metrics matched the events', so a trivial edit to a stored
field (`devices` "0" -> "0 ") switched it off, and a run whose times were squeezed (its steady
rate +17.6%) was named only for the edit; a user who then remade the metrics file learned of
the rate only afterwards."""

import json

from event_times import event_file, retimed
from set_copies import copy_committed_set, remake_manifest

from sacscale.analysis.metrics import TOTAL_STEPS, analyze_run, run_events
from sacscale.evidence.verify import verify

RUN = "shared_r2_n1_pool7"  # log points every 10, about 1 s apart; its window steps 160..300


def _squeezed_after(run, step: int, factor: float):
    """The run's rank 0 events after log point `step` moved closer to it in time by `factor`."""
    _, per_rank = run_events(run)
    (at,) = [s.wall_time for s in per_rank[0][TOTAL_STEPS] if s.step == step]
    retimed(event_file(run), lambda logged, wall: at + (wall - at) * factor if logged > step else wall)


def _verified(tmp_path, stored_change):
    root = copy_committed_set(tmp_path, "h200x1_shared_short")
    run = root / "runs" / RUN
    _squeezed_after(run, 160, 0.85)
    metrics = analyze_run(run)
    stored_change(metrics)
    (root / "metrics" / f"{RUN}.json").write_text(json.dumps(metrics, indent=1))
    remake_manifest(root)
    return verify(root).problems()


def _rate_named(problems: list[str]) -> bool:
    return any(f"metric: runs/{RUN}: the events' times give " in p and "the trainer logged" in p for p in problems)


def test_squeezed_times_are_named_where_the_stored_metrics_match(tmp_path):
    problems = _verified(tmp_path, lambda metrics: None)
    assert _rate_named(problems), problems


def test_squeezed_times_are_named_beside_a_stored_field_edited(tmp_path):
    problems = _verified(tmp_path, lambda metrics: metrics.update(devices="0 "))
    assert _rate_named(problems), problems
    assert any(f'{RUN}: devices: stored "0 ", recomputed "0"' in p for p in problems), problems
