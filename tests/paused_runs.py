"""A sacscale command started paused at a named point (tests/evidence/paused_sacscale.py) and
let go, for tests of two commands at once that must not depend on timing."""

import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

PAUSED = Path(__file__).resolve().parent / "evidence" / "paused_sacscale.py"


def started_paused(tmp_path: Path, at: str, *argv) -> subprocess.Popen:
    """The command run by paused_sacscale.py, returned once it has stopped at `at`."""
    env = dict(os.environ, PAUSE_AT=at, PAUSE_MARKER=str(tmp_path / "paused"), PAUSE_GO=str(tmp_path / "go"))
    first = subprocess.Popen([sys.executable, str(PAUSED), *map(str, argv)], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120  # the start of a Python process on a loaded machine
    while not (tmp_path / "paused").exists():
        assert first.poll() is None, first.communicate()
        assert time.monotonic() < deadline, "the first command never reached its pause"
        time.sleep(0.05)
    return first


def finished(tmp_path: Path, first: subprocess.Popen) -> subprocess.CompletedProcess:
    (tmp_path / "go").touch()
    out, err = first.communicate(timeout=300)
    return subprocess.CompletedProcess(first.args, first.returncode, out, err)


_HOLD = ("import sys; from pathlib import Path; from sacscale.locks import lock_beside\n"
         "with lock_beside(Path(sys.argv[1])):\n    print('held', flush=True); sys.stdin.read()")


@contextlib.contextmanager
def lock_held_elsewhere(folder: Path):
    """The lock beside `folder` held by another process (another command's output there)
    until the block ends."""
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(folder)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        yield
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
