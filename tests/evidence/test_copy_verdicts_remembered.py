"""Each tag's copy verdict is remembered by the two series' content: verify judges every pair of
a set's rank series, and a set verified again (or a copy of it) judges the same pairs. The same
content is judged once and gives the same answer; other content is judged afresh."""

import numpy as np

from sacscale.evidence import copied_events
from sacscale.evidence.copied_events import copied


def _series(seed: int, points: int = 60) -> dict[int, float]:
    rng = np.random.default_rng(seed)
    values = 100 + np.cumsum(rng.normal(0, 1, points)) + rng.normal(0, 3, points)
    return {10 * (i + 1): float(np.float32(v)) for i, v in enumerate(values)}


def _values(seed: int) -> dict:
    return {"Episode/return": _series(seed), "Episode/length": _series(seed + 100), "Time/collect": _series(seed + 200)}


def _counted(monkeypatch) -> list:
    calls = []
    judged = copied_events._tag_copied

    def counting(a, b, pooled):
        calls.append(1)
        return judged(a, b, pooled)

    monkeypatch.setattr(copied_events, "_tag_copied", counting)
    return calls


def test_the_same_pair_is_judged_once_and_answers_the_same(monkeypatch):
    calls = _counted(monkeypatch)
    a, b = _values(1), _values(2)
    copy = {tag: {step: value * (1 + 3e-6) for step, value in series.items()} for tag, series in a.items()}
    first = copied(a, b, across_runs=True), copied(a, copy, across_runs=True)
    judged = len(calls)
    again = copied(dict(a), {tag: dict(s) for tag, s in b.items()}, across_runs=True), copied(a, copy, across_runs=True)
    assert judged == 6 and len(calls) == judged  # three tags a pair, each judged once
    assert again == first and first[0] == [] and first[1]  # the copy is still named, the others not


def test_a_changed_value_is_judged_afresh(monkeypatch):
    calls = _counted(monkeypatch)
    a, b = _values(3), _values(4)
    copied(a, b)
    changed = {tag: dict(series) for tag, series in b.items()}
    changed["Time/collect"][10] += 1.0
    copied(a, changed)
    copied(a, b, across_runs=True)  # a verdict across runs reads more than one within a run
    assert len(calls) == 3 + 1 + 3
