"""A lock beside a file or folder whose own name is legal but near the file system's limit
(250-255 bytes): its lock file `.<name>.lock` was longer than the limit, so an output of
such a name was refused "cannot lock it to write it (lock file ...: cannot open it (File
name too long))", and so was a new run's folder. A lock name that would not fit is now cut,
with a digest of the whole name (as a temporary name is, sacscale.long_names), and every
command computes it the same way: one name, one lock file."""

import os
import subprocess
import sys

import pytest

from sacscale.locks import TRAINER_LOCK, HeldBeside, holder_beside, lock_beside, lock_file_beside

TOPOLOGY = os.path.join(os.path.dirname(__file__), "parallel", "fixtures", "topology")
LONG = ["a" * 250 + ".json", "é" * 125 + ".json", "c" * 255]
HOLD = ("import sys; from pathlib import Path; from sacscale.locks import lock_beside\n"
        "with lock_beside(Path(sys.argv[1]), sys.argv[2]):\n    print('held', flush=True); sys.stdin.read()")


def plan_matrix(out):
    return subprocess.run([sys.executable, "-m", "sacscale.cli", "plan-matrix", "--lscpu",
                           os.path.join(TOPOLOGY, "h200x1.lscpu"), "--nvidia-smi-topo",
                           os.path.join(TOPOLOGY, "h200x1.topo"), "--output", str(out)],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("name", LONG[:2])
def test_an_output_of_a_long_legal_name_is_written(tmp_path, name):
    done = plan_matrix(tmp_path / name)
    assert done.returncode == 0, done.stderr
    assert os.listdir(tmp_path) == [name] and (tmp_path / name).read_text().startswith("{")


def test_a_name_past_the_limit_is_named_as_too_long_itself(tmp_path):
    out = tmp_path / ("a" * 251 + ".json")  # 256 bytes
    done = plan_matrix(out)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        f"sacscale plan-matrix: error: argument --output: {str(out)[:160]!r}... ({len(str(out)) - 160:,} more "
        f"characters) is longer than a path can be (255 bytes a name, 4,095 in all; its longest name is 256 bytes, the "
        f"whole {len(str(out))}): give a shorter one")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("ending", [".lock", TRAINER_LOCK])
def test_each_long_name_has_one_lock_file_of_its_own_that_fits(tmp_path, ending):
    locks = [lock_file_beside(tmp_path / name, ending) for name in LONG + ["a" * 250 + ".jsox"]]
    assert all(len(os.fsencode(lock.name)) <= 255 and lock.name.endswith(ending) for lock in locks)
    assert len(set(locks)) == len(locks)  # two long names of one start: two locks
    assert locks == [lock_file_beside(tmp_path / name, ending) for name in LONG + ["a" * 250 + ".jsox"]]
    assert lock_file_beside(tmp_path / "short", ending) == tmp_path / f".short{ending}"  # as before
    assert lock_file_beside(tmp_path / LONG[0]) != lock_file_beside(tmp_path / LONG[0], TRAINER_LOCK)


@pytest.mark.parametrize("ending", [".lock", TRAINER_LOCK])
def test_a_long_names_lock_held_by_another_process_is_found_by_every_look(tmp_path, ending):
    folder = tmp_path / ("r" * 255)
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(folder), ending], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        assert holder_beside(folder, ending) == f"pid {holder.pid}"
        with pytest.raises(HeldBeside) as refused, lock_beside(folder, ending):
            pass
        assert refused.value.lock == lock_file_beside(folder, ending)
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    with lock_beside(folder, ending) as lock:  # released: taken here, then removed
        assert lock.is_file()
    assert os.listdir(tmp_path) == []
