"""Events copied from another rank or run named by their measured values, whatever their
bytes or wall times: a rank's events copied with one value changed, or another run's
events with every wall time moved by the runs' start difference, passed verify (only
byte-identical files and ranks equal at every step were named). And the ways around a share
pooled over every measured tag at the same (tag, step), exact: one tag family copied, values
copied one logged step off, values nudged by a float32 ulp, and the CPU preset's short series."""

import io
import random
import json

from set_copies import copy_committed_set, remake_manifest
from synthetic_runs import write_run

import numpy as np

from sacscale.analysis.events import Scalar
from sacscale.evidence.copied_events import _measured, copied_rank_problems, copied_run_problems, run_values
from sacscale.evidence.learner_start import first_update_iteration
from sacscale.evidence.logged_tags import LEARNER_TAGS
from sacscale.evidence.verify import verify

SET = "h200x1_shared_short"
TWO_RANKS = "runs/shared_r1_n2_shared"
RANK0 = f"{TWO_RANKS}/tb/rank0/events.out.tfevents.1796337555.vm.992.0"
RANK1 = f"{TWO_RANKS}/tb/rank1/events.out.tfevents.1796337555.vm.993.0"
R1 = "runs/shared_r1_n1_pool7"
R1_FILE = f"{R1}/tb/rank0/events.out.tfevents.1796337489.vm.798.0"
R2 = "runs/shared_r2_n1_pool7"
R2_FILE = f"{R2}/tb/rank0/events.out.tfevents.1796337690.vm.1385.0"


def _events(path):
    from tensorboard.compat.proto import event_pb2

    data, events, at = path.read_bytes(), [], 0
    while at < len(data):
        length = int.from_bytes(data[at:at + 8], "little")
        events.append(event_pb2.Event.FromString(data[at + 12:at + 12 + length]))
        at += 12 + length + 4
    return events


def _write(path, events) -> None:
    from tensorboard.summary.writer.record_writer import RecordWriter

    out = io.BytesIO()
    writer = RecordWriter(out)
    for event in events:
        writer.write(event.SerializeToString())
    path.write_bytes(out.getvalue())


RANKS_COPIED = ("shared_r1_n2_shared: tb/rank0 and tb/rank1 share most measured values of a tag, whatever the step, "
                "or follow its step-to-step turns (")
RUN_COPIED = ("shared_r2_n1_pool7: runs/shared_r1_n1_pool7 tb/rank0 and runs/shared_r2_n1_pool7 tb/rank0 share most "
              "measured values of a tag, whatever the step, or follow its step-to-step turns (")


def _named(records: list[str], prefix: str, *shown: str) -> None:
    """A record that starts with `prefix` and shows each of `shown` (a tag and its count)."""
    found = [r for r in records if r.startswith(prefix)]
    assert found and all(part in found[0] for part in shown), (shown, records)


def _records_after(tmp_path, forge) -> list[str]:
    root = copy_committed_set(tmp_path, SET)
    forge(root)
    remake_manifest(root)
    return verify(root).records


def test_a_ranks_events_copied_with_one_value_changed_are_named(tmp_path):
    def forge(root):
        events = _events(root / RANK0)
        for event in events:
            for value in event.summary.value:
                if event.step == 300 and value.tag == "Time/learner_update_ms":
                    value.simple_value += 1.0
        _write(root / RANK1, events)

    records = _records_after(tmp_path, forge)
    _named(records, RANKS_COPIED, "Episode/return: 28 of 28", "Perf/rank_fps: 30 of 30")


def test_another_runs_events_with_every_wall_time_moved_are_named(tmp_path):
    def forge(root):
        def start(run):
            return json.loads((root / run / "run.json").read_text())["start_time"]

        shift = start(R1) - start(R2)
        events = _events(root / R2_FILE)
        for event in events:
            event.wall_time += shift
        _write(root / R1_FILE, events)

    records = _records_after(tmp_path, forge)
    _named(records, RUN_COPIED, "Episode/return: 28 of 28", "Perf/rank_fps: 30 of 30")
    assert not any("the same event file content" in p for p in records), records  # the bytes differ


def test_another_runs_returns_alone_copied_are_named(tmp_path):
    """The returns the page's learning figures rest on are a twelfth of a rank's measured
    values: pooled with the phase times, a copy of them alone was never most of them."""
    def forge(root):
        theirs = {(e.step, v.tag): v.simple_value for e in _events(root / R2_FILE) for v in e.summary.value}
        events = _events(root / R1_FILE)
        for event in events:
            for value in event.summary.value:
                if value.tag.startswith("Episode/"):
                    value.simple_value = theirs[(event.step, value.tag)]
        _write(root / R1_FILE, events)

    records = _records_after(tmp_path, forge)
    _named(records, RUN_COPIED, "Episode/return: 28 of 28", "Episode/length: 28 of 28")


def test_a_ranks_values_copied_one_logged_step_late_are_named(tmp_path):
    """Compared only at the same (tag, step), a copy moved by one logged step agreed on none."""
    def forge(root):
        earlier, last = {}, {}
        for event in _events(root / RANK0):
            for value in event.summary.value:
                if _measured(value.tag):
                    earlier[(event.step, value.tag)] = last.get(value.tag)
                    last[value.tag] = value.simple_value
        events = _events(root / RANK1)
        for event in events:
            for value in event.summary.value:
                if earlier.get((event.step, value.tag)) is not None:
                    value.simple_value = earlier[(event.step, value.tag)]
        _write(root / RANK1, events)

    records = _records_after(tmp_path, forge)
    _named(records, RANKS_COPIED, "Episode/return: 27 of 28", "Perf/rank_fps: 29 of 30")


def test_a_ranks_values_copied_with_every_other_one_an_ulp_off_are_named(tmp_path):
    """Exactly equal values only: half of them an ulp off was not more than half equal."""
    def forge(root):
        events = _events(root / RANK0)
        for at, value in enumerate(v for e in events for v in e.summary.value if _measured(v.tag)):
            if at % 2 == 0:
                value.simple_value = float(np.nextafter(np.float32(value.simple_value), np.float32(np.inf)))
        _write(root / RANK1, events)

    records = _records_after(tmp_path, forge)
    _named(records, RANKS_COPIED, "Episode/return: 28 of 28", "Perf/rank_fps: 30 of 30")


def _start(root, run) -> float:
    return json.loads((root / run / "run.json").read_text())["start_time"]


def _values_by_step(path) -> dict:
    return {(e.step, v.tag): v.simple_value for e in _events(path) for v in e.summary.value}


def _scaled(value: float) -> float:
    return float(np.float32(value) * np.float32(1 + 3e-6))  # 25-50 float32 ulps: no page shows it


def test_another_runs_events_scaled_by_3e_6_are_named(tmp_path):
    """Another repeat's events with every wall time moved to this run's window and every
    measured value x(1 + 3e-6): no value equal, every step's turn the other's."""
    def forge(root):
        shift = _start(root, R1) - _start(root, R2)
        events = _events(root / R2_FILE)
        for event in events:
            event.wall_time += shift
            for value in event.summary.value:
                if _measured(value.tag):
                    value.simple_value = _scaled(value.simple_value)
        _write(root / R1_FILE, events)

    records = _records_after(tmp_path, forge)
    _named(records, RUN_COPIED, "Episode/return (step-to-step turns): 26 of 26")


def test_a_ranks_measured_values_scaled_from_the_others_are_named(tmp_path):
    """Rank 1's phase times, rate and returns rank 0's x(1 + 3e-6), its counters and wall times its own."""
    def forge(root):
        theirs = _values_by_step(root / RANK0)
        events = _events(root / RANK1)
        for event in events:
            for value in event.summary.value:
                copied = value.tag.startswith("Time/") or value.tag in ("Perf/rank_fps", "Episode/return")
                if copied and (event.step, value.tag) in theirs:
                    value.simple_value = _scaled(theirs[(event.step, value.tag)])
        _write(root / RANK1, events)

    records = _records_after(tmp_path, forge)
    _named(records, RANKS_COPIED, "Episode/return (step-to-step turns): 26 of 26")


def test_another_runs_returns_copied_with_the_learner_tags_deleted_early_are_named(tmp_path):
    """The learner's tags deleted at every step but the last: the events then show no update
    before step 300, but the recorded config gives the first at iteration 10 (20480 rows at
    2048 envs), so the copied returns are judged and the deleted tags named."""
    def forge(root):
        theirs = _values_by_step(root / R2_FILE)
        events = _events(root / R1_FILE)
        for event in events:
            for value in event.summary.value:
                if value.tag == "Episode/return":
                    value.simple_value = theirs[(event.step, value.tag)]
            learner = [v for v in event.summary.value if v.tag in LEARNER_TAGS]
            for value in learner if event.step < 300 else []:
                event.summary.value.remove(value)
        _write(root / R1_FILE, events)

    records = _records_after(tmp_path, forge)
    _named(records, RUN_COPIED, "Episode/return: 28 of 28")
    assert any(r.startswith("shared_r1_n1_pool7: tb/rank0 has no Loss/critic, Loss/actor, Loss/alpha and 3 "
                            "more tag(s) at step 10, where the learner had updated (train_meta.json config: max(batch "
                            "size 8192, 10 x 2048 envs) rows at 2048 a rank an iteration give its first update at "
                            "iteration 10) (and gaps at 28 other step(s))") for r in records), records


def test_another_runs_steady_window_copied_is_named(tmp_path):
    """Every event of the steady window but its first from another repeat (times moved): 14
    of 28 returns, half the whole series, over the 40% that independent runs stay far under."""
    def forge(root):
        shift = _start(root, R1) - _start(root, R2)
        theirs = [e for e in _events(root / R2_FILE) if e.step >= 170 and e.summary.value]
        for event in theirs:
            event.wall_time += shift
        ours = [e for e in _events(root / R1_FILE) if not (e.step >= 170 and e.summary.value)]
        _write(root / R1_FILE, ours + theirs)

    records = _records_after(tmp_path, forge)
    _named(records, RUN_COPIED, "Episode/return: 14 of 28")


def test_another_runs_episode_lengths_fall_rates_and_rewards_copied_are_named(tmp_path):
    """Every collector-measured tag the page reads besides the returns (lengths, fall rates,
    reward terms), copied exactly at the same steps."""
    def forge(root):
        theirs = _values_by_step(root / R2_FILE)
        events = _events(root / R1_FILE)
        for event in events:
            for value in event.summary.value:
                if value.tag.startswith(("Episode/length", "Episode/fall_rate", "Reward/", "RewardRaw/")):
                    value.simple_value = theirs[(event.step, value.tag)]
        _write(root / R1_FILE, events)

    records = _records_after(tmp_path, forge)
    _named(records, RUN_COPIED, "Episode/length: 28 of 28")


def _rank(steps: range, offset: float) -> dict:
    return {"Perf/rank_env_steps": [Scalar(s, 1.0, float(s * 64)) for s in steps],
            "Perf/iteration": [Scalar(s, 1.0, float(s)) for s in steps],
            "Time/learner_update_ms": [Scalar(s, 1.0, 3.0 + offset + s / 7) for s in steps]}


RANK_PREFIX = ("tb/rank0 and tb/rank1 share most measured values of a tag, whatever the step, or follow its "
               "step-to-step turns")


def test_ranks_that_agree_on_counters_only_are_their_own():
    steps = range(10, 310, 10)
    assert copied_rank_problems("run", {0: _rank(steps, 0.0), 1: _rank(steps, 0.5)}) == []
    assert copied_rank_problems("run", {0: _rank(steps, 0.0), 1: _rank(steps, 0.0)}) == [
        f"run: {RANK_PREFIX} (Time/learner_update_ms: 30 of 30), but each rank collects and times its own: "
        "a rank's events copied"]


def _cpu_rank(fps: list[float], returns: list[float]) -> dict:
    steps = range(3, 3 * len(fps) + 1, 3)
    return {"Perf/rank_fps": [Scalar(s, 1.0, v) for s, v in zip(steps, fps)],
            "Episode/return": [Scalar(s, 1.0, v) for s, v in zip((3, 9), returns)]}


def test_a_cpu_preset_ranks_copied_rates_are_named():
    """The CPU preset's ranks log 8 rates each (24 iterations, a value every 3): under the
    20 shared values a copy needed, none was ever named there."""
    own = [21.4, 1240.7, 812.5, 1104.1, 138.8, 78.1, 77.0, 75.5]
    other = [8.2, 574.7, 389.4, 294.2, 36.8, 23.0, 33.4, 30.4]
    returns = [0.310499, 2.928227]  # two runs of one seed: the same episodes before the learner updates
    assert copied_rank_problems("cpu_r1_n2_cpu", {0: _cpu_rank(own, returns), 1: _cpu_rank(other, returns)}) == []
    assert copied_rank_problems("cpu_r1_n2_cpu", {0: _cpu_rank(own, returns), 1: _cpu_rank(own, returns)}) == [
        f"cpu_r1_n2_cpu: {RANK_PREFIX} (Perf/rank_fps: 8 of 8), but each rank collects and times its own: "
        "a rank's events copied"]


def _learning_rank(returns: list[float], losses_from: int) -> dict:
    steps = range(1, len(returns) + 1)
    return {"Episode/return": [Scalar(s, 1.0, v) for s, v in zip(steps, returns)],
            "Loss/critic": [Scalar(s, 1.0, 0.5 + s) for s in steps if s >= losses_from]}


# 16 envs a rank, a batch of 128: the learner needs 160 rows (10 x 16), its first update at iteration 10
CONFIG = {"num_envs": 16, "batch_size": 128, "log_every": 1, "iterations": 15, "extra": {}}


def test_returns_the_seed_alone_decides_are_left_out_by_the_recorded_config():
    """Two runs of one seed collect the same episodes until their learners update (at
    iteration 10 here, one iteration of policy lag after it): the recorded config says when,
    not the events' own Loss/* steps, which a forger deletes to leave a copy's returns out."""
    shared = [0.5 + i * i / 10 for i in range(11)]  # iterations 1..11, the seed's
    first = _learning_rank(shared + [3.1, 3.4, 3.2, 3.6], losses_from=10)
    second = _learning_rank(shared + [2.7, 2.9, 3.0, 3.3], losses_from=10)
    assert copied_rank_problems("r", {0: first, 1: second}, CONFIG) == []
    late = [4.0, 4.1, 4.25, 4.3, 4.6, 4.5, 4.9]
    copy = _learning_rank(shared + late, losses_from=18)  # Loss/* deleted before the last: no matter
    assert copied_rank_problems("r", {0: _learning_rank(shared + late, 10), 1: copy}, CONFIG) == [
        f"r: {RANK_PREFIX} (Episode/return: 7 of 7), but each rank collects and times its own: a rank's events copied"]


def test_a_learner_that_never_starts_leaves_every_return_to_the_seed(tmp_path):
    """The two configurations of a repeat share a seed: where the learner never starts (2048
    rows at 16 envs: iteration 128 of 60) every episode value of the pair is the same, and
    the set's own pipeline failed on it. Laid out as runs: 1 and 2 ranks, log every 2."""
    config = {"num_envs": 16, "batch_size": 2048, "log_every": 2, "iterations": 60, "extra": {}, "replay_per_env": 128}
    returns = [(s, 1000.0 + s, 0.3 + (s % 7) / 10 + s / 100) for s in range(2, 61, 2)]
    for name, ranks, prime in (("q1", 1, 11), ("q2", 2, 13)):
        steps = [(s, 1000.0 + s, 16.0 * ranks * s) for s in range(2, 61, 2)]
        write_run(tmp_path / name, steps, ranks=ranks, returns=returns,
                  fps=[(s, 1000.0 + s, 400.0 * ranks + s * 37 % prime) for s in range(2, 61, 2)])
    assert first_update_iteration(config) == 128
    by_run = {name: run_values(tmp_path / name, config) for name in ("q1", "q2")}
    assert copied_run_problems(by_run) == []
    kept = {name: run_values(tmp_path / name, None) for name in ("q1", "q2")}  # no config: every return kept
    assert any("Episode/return: 30 of 30" in p for p in copied_run_problems(kept))


def _series(values: dict[str, list[float]], every: int = 1) -> dict:
    return {tag: [Scalar(every * (i + 1), 1.0, v) for i, v in enumerate(vs)] for tag, vs in values.items()}


def _noisy(n: int, seed: int, base: float) -> list[float]:
    rng = np.random.default_rng(seed)
    return list(base * (1 + 0.02 * rng.standard_normal(n)))


def test_a_scaled_or_offset_copy_is_named_by_its_turns():
    """No value of a copy x(1 + 3e-6), or + an offset, equals the other's; its steps' ups and
    downs are the other's all the same. Independent measurements' are their own."""
    own = {"Perf/rank_fps": _noisy(30, 1, 17000.0), "Time/learner_update_ms": _noisy(30, 2, 23.0)}
    other = {"Perf/rank_fps": _noisy(30, 3, 17000.0), "Time/learner_update_ms": _noisy(30, 4, 23.0)}
    assert copied_rank_problems("r", {0: _series(own), 1: _series(other)}) == []
    for forged in ({tag: list(np.float32(np.float32(vs) * np.float32(1 + 3e-6))) for tag, vs in own.items()},
                   {tag: [v + 0.37 for v in vs] for tag, vs in own.items()}):
        found = copied_rank_problems("r", {0: _series(own), 1: _series(forged)})
        assert found and "Perf/rank_fps (step-to-step turns): 28 of 28" in found[0], found


def test_a_copied_last_half_is_named_by_its_turns():
    """The last half of the series (the steady window every rate figure averages) copied, the
    first half its own: the whole series shares under half, its last half all."""
    own, other = _noisy(30, 5, 17000.0), _noisy(30, 6, 17000.0)
    forged = other[:16] + [v * 1.000003 for v in own[16:]]
    found = copied_rank_problems("r", {0: _series({"Perf/rank_fps": own}), 1: _series({"Perf/rank_fps": forged})})
    assert found and "Perf/rank_fps (step-to-step turns in the last half)" in found[0], found


def test_an_exact_copy_of_five_values_a_tag_is_named_pooled():
    """A CPU set logging every 5 of 24 iterations holds 5 values a tag, too few to judge a
    tag by: every tag pooled, an exact copy shares them all."""
    tags = ("Perf/rank_fps", "Time/learner_update_ms", "Time/collector_step_ms", "Episode/length")
    own = {tag: _noisy(5, 10 + i, 40.0) for i, tag in enumerate(tags)}
    other = {tag: _noisy(5, 20 + i, 40.0) for i, tag in enumerate(tags)}
    assert copied_rank_problems("r", {0: _series(own, 5), 1: _series(other, 5)}) == []
    assert copied_rank_problems("r", {0: _series(own, 5), 1: _series(own, 5)}) == [
        f"r: {RANK_PREFIX} (every measured tag's values: 20 of 20), but each rank collects and times its own: "
        "a rank's events copied"]


def _replace_with(root, source: str, target: str, tags, change) -> None:
    """target's values of `tags` (prefixes) replaced by change(source's values in log order, i)."""
    theirs: dict[str, list[float]] = {}
    for event in _events(root / source):
        for value in event.summary.value:
            if value.tag.startswith(tags):
                theirs.setdefault(value.tag, []).append(value.simple_value)
    seen: dict[str, int] = {}
    events = _events(root / target)
    for event in events:
        for value in event.summary.value:
            if value.tag.startswith(tags):
                i = seen[value.tag] = seen.get(value.tag, -1) + 1
                value.simple_value = change(theirs[value.tag], i)
    _write(root / target, events)


FLUCTUATIONS = "(step-to-step turns correlated at 0.99"


def test_another_runs_returns_and_lengths_noised_below_the_page_are_named(tmp_path):
    """x(1 + 2e-5 u): no value within 1e-6 and no turn within 1e-4, nothing the page shows."""
    noise = random.Random(5)
    records = _records_after(tmp_path, lambda root: _replace_with(
        root, R2_FILE, R1_FILE, ("Episode/return", "Episode/length"),
        lambda theirs, i: theirs[i] * (1 + 2e-5 * noise.uniform(-1, 1))))
    _named(records, RUN_COPIED, f"Episode/return {FLUCTUATIONS}", f"Episode/length {FLUCTUATIONS}")


def test_a_ranks_values_noised_are_named(tmp_path):
    noise = random.Random(7)
    records = _records_after(tmp_path, lambda root: _replace_with(
        root, RANK0, RANK1, ("Time/", "Episode/", "Reward/", "RewardRaw/"),
        lambda theirs, i: theirs[i] * (1 + 3e-4 * noise.uniform(-1, 1))))
    _named(records, RANKS_COPIED, f"Episode/return {FLUCTUATIONS}")


def test_another_runs_returns_a_log_point_late_and_scaled_are_named(tmp_path):
    records = _records_after(tmp_path, lambda root: _replace_with(
        root, R2_FILE, R1_FILE, ("Episode/return", "Episode/length"),
        lambda theirs, i: theirs[max(i - 1, 0)] * (1 + 3e-6)))
    _named(records, RUN_COPIED, f"Episode/return {FLUCTUATIONS}", "1 log point apart")


def test_another_runs_returns_rounded_to_the_pages_decimals_are_named(tmp_path):
    records = _records_after(tmp_path, lambda root: _replace_with(
        root, R2_FILE, R1_FILE, ("Episode/return",), lambda theirs, i: round(theirs[i], 2)))
    _named(records, RUN_COPIED, f"Episode/return {FLUCTUATIONS}")
