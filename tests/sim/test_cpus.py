import os
import threading
import time

import numpy as np
import pytest
from mujoco.batch import Batch

from sacscale.cpus import (
    MAX_CPU_ID,
    CpuRangeError,
    format_cpu_list,
    parse_cpu_list,
    pin_process,
    pinned_thread,
    thread_affinities,
    validate_cpu_ids,
)
from sacscale.task.g1_walk_flat import G1WalkFlat

ALLOWED = sorted(os.sched_getaffinity(0))
needs_two_cpus = pytest.mark.skipif(len(ALLOWED) < 2, reason="needs at least 2 usable CPUs")


def test_parse_cpu_list():
    cpus = parse_cpu_list("8-39,48-79")
    assert cpus == list(range(8, 40)) + list(range(48, 80)) and len(cpus) == 64
    assert parse_cpu_list("3, 0-1 ,1") == [0, 1, 3]
    assert parse_cpu_list("5") == [5]
    assert parse_cpu_list([3, 1, 1]) == [1, 3]
    assert parse_cpu_list(range(2)) == [0, 1]
    assert format_cpu_list(parse_cpu_list("8-39,48-79")) == "8-39,48-79"
    assert format_cpu_list([0, 1, 2, 5]) == "0-2,5"


@pytest.mark.parametrize("bad", ["", "a", "1,,2", "3-1", "-2", "1-", [], [-1], [1.5], [True]])
def test_parse_cpu_list_rejects(bad):
    with pytest.raises(ValueError):
        parse_cpu_list(bad)


def test_validate_names_the_missing_cpus():
    missing = max(os.cpu_count(), max(ALLOWED)) + 1000
    with pytest.raises(ValueError) as e:
        validate_cpu_ids(f"{ALLOWED[0]},{missing}-{missing + 1}")
    msg = str(e.value)
    assert f"{missing}-{missing + 1}" in msg
    assert f"CPU(s) {ALLOWED[0]} " not in msg  # the good one is not blamed
    with pytest.raises(ValueError, match=str(missing)):
        validate_cpu_ids([missing])
    assert validate_cpu_ids(ALLOWED) == ALLOWED


@needs_two_cpus
def test_pinned_thread_is_per_thread_and_restored():
    me = threading.get_native_id()
    before = thread_affinities()[me]
    started = threading.Event()
    stop = threading.Event()
    other = {}

    def idle():
        other["tid"] = threading.get_native_id()
        started.set()
        stop.wait()

    t = threading.Thread(target=idle)
    t.start()
    started.wait()
    try:
        with pinned_thread([ALLOWED[0]]) as cpus:
            assert cpus == [ALLOWED[0]]
            masks = thread_affinities()
            assert masks[me] == [ALLOWED[0]]
            assert masks[other["tid"]] == before  # only the calling thread moved
        assert thread_affinities()[me] == before
    finally:
        stop.set()
        t.join()


def test_pinned_thread_none_is_noop():
    before = os.sched_getaffinity(0)
    with pinned_thread(None) as cpus:
        assert cpus is None and os.sched_getaffinity(0) == before


def _new_threads(before):
    return {tid: mask for tid, mask in thread_affinities().items() if tid not in before}


@needs_two_cpus
def test_batch_threads_inherit_the_pinned_mask(g1_model):
    """mujoco.batch.Batch starts its nthread-1 workers in the constructor."""
    me = threading.get_native_id()
    mine = thread_affinities()[me]
    before = set(thread_affinities())
    with pinned_thread([ALLOWED[0]]):
        batch = Batch(g1_model, 4, 3)
    workers = _new_threads(before)
    assert len(workers) == 2
    assert all(mask == [ALLOWED[0]] for mask in workers.values())
    assert thread_affinities()[me] == mine
    batch.reset(keyframe=0)
    batch.step(nstep=3)  # stepping neither adds threads nor changes their masks
    assert _new_threads(before) == workers
    del batch


@needs_two_cpus
def test_env_pins_its_pool_and_keeps_the_caller(g1_model):
    me = threading.get_native_id()
    mine = thread_affinities()[me]
    before = set(thread_affinities())
    env = G1WalkFlat(g1_model, 8, 2, seed=0, cpu_ids=[ALLOWED[-1]])
    workers = _new_threads(before)
    assert len(workers) == 1 and list(workers.values())[0] == [ALLOWED[-1]]
    env.step(np.zeros((8, 29), np.float32))
    assert thread_affinities()[me] == mine  # the caller keeps its mask
    # the env's physics thread (the one that calls Batch.step) joined the pinned pool
    after = _new_threads(before)
    assert len(after) == 2 and all(mask == [ALLOWED[-1]] for mask in after.values())
    env.close()


def test_env_rejects_missing_cpus(g1_model):
    with pytest.raises(ValueError, match="99999"):
        G1WalkFlat(g1_model, 2, 1, seed=0, cpu_ids=[99999])


@needs_two_cpus
def test_pin_process_moves_threads_started_before_and_after():
    """Run in a child process: pinning is for the whole process and cannot be undone per thread."""
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    with ctx.Pool(1) as pool:
        before, after, main = pool.apply(_pin_in_child, (ALLOWED[-1],))
    assert before == after == main == [ALLOWED[-1]]


def _pin_in_child(cpu: int):
    started, stop = threading.Event(), threading.Event()
    ids = {}

    def worker(name):
        ids[name] = threading.get_native_id()
        started.set()
        stop.wait()

    early = threading.Thread(target=worker, args=("before",))
    early.start()
    started.wait()
    pin_process([cpu])
    started.clear()
    late = threading.Thread(target=worker, args=("after",))
    late.start()
    started.wait()
    masks = thread_affinities()
    stop.set()
    early.join()
    late.join()
    return masks[ids["before"]], masks[ids["after"]], masks[threading.get_native_id()]


def test_a_huge_range_is_refused_before_it_is_expanded():
    t0 = time.monotonic()
    with pytest.raises(CpuRangeError) as e:
        parse_cpu_list("0-3,8-4000000000")
    assert e.value.part == "8-4000000000" and time.monotonic() - t0 < 1
    assert parse_cpu_list(f"{MAX_CPU_ID}") == [MAX_CPU_ID]
    with pytest.raises(CpuRangeError):
        parse_cpu_list("10-20", max_id=15)
