"""A render stopped by SIGTERM (a batch system's cancel, Snakemake's kill) or SIGHUP (a
closed terminal) while it writes: before, the interpreter ended at once and left the
video's temporary file (`.walk.tmpPID.THREAD.webp`, empty) beside the output; Ctrl-C was
already unwound. Now every command but the trainers and the run wrapper (which handle
their own signals) unwinds the same way: one line, exit status 128+signal, nothing left.
"""

import os
import signal
import subprocess
import sys
import time

import pytest

from test_render import make_checkpoint

# the temporary file appears once the models are built (imports, the render model): about
# 10 s on 2 idle cores; generous for a loaded machine
STARTED_WITHIN_S = 240
STOPPED_WITHIN_S = 120


@pytest.mark.parametrize("suffix, sig", [(".webp", signal.SIGTERM), (".mp4", signal.SIGHUP)],
                         ids=["webp-SIGTERM", "mp4-SIGHUP"])
def test_a_stop_signal_mid_render_leaves_no_temporary_file(tmp_path, gl_env, suffix, sig):
    checkpoint = make_checkpoint(tmp_path / "run" / "checkpoints" / "final.pt")
    folder = tmp_path / "video"
    folder.mkdir()
    output = folder / f"walk{suffix}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    # 6,000 small frames: minutes of rendering, far longer than the wait for its start
    proc = subprocess.Popen([sys.executable, "-m", "sacscale", "render", str(checkpoint), "--output", str(output),
                             "--seconds", "600", "--width", "64", "--height", "48", "--fps", "10"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for_temporary_file(proc, folder, time.monotonic() + STARTED_WITHIN_S)
        proc.send_signal(sig)
        err = proc.communicate(timeout=STOPPED_WITHIN_S)[1]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    name = signal.Signals(sig).name
    assert proc.returncode == 128 + sig, err
    assert err.strip().splitlines() == [f"sacscale render: interrupted ({name})"], err
    assert list(folder.iterdir()) == []


def _wait_for_temporary_file(proc: subprocess.Popen, folder, deadline: float) -> None:
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"render ended before it wrote (exit status {proc.returncode}): {proc.stderr.read()}")
        if any(p.name.startswith(".walk.tmp") for p in folder.iterdir()):
            return
        time.sleep(0.05)
    pytest.fail(f"no temporary file in {folder} within {STARTED_WITHIN_S} s")
