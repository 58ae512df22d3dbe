"""A stop signal that lands while the MP4 writer starts ffmpeg (after its fork, before
imageio's generator holds the process): the exception left Popen without the process,
nobody ended it, and ffmpeg, its input closed, made a video of no frames at the temporary
path after render had removed it: `.walk.tmpPID.THREAD.mp4` was left beside the output.
The writer now starts ffmpeg (and hands it each frame) with stop signals held, so the stop
is raised once the writer holds ffmpeg, which is ended before the file is removed."""

import os
import signal
import subprocess
import time

from test_render import make_checkpoint

GONE_WITHIN_S = 60


def test_a_stop_as_ffmpeg_starts_leaves_no_temporary_file(tmp_path, gl_env, sacscale_main, monkeypatch):
    checkpoint = make_checkpoint(tmp_path / "run" / "checkpoints" / "final.pt")
    folder = tmp_path / "video"
    folder.mkdir()
    encoders = []
    start_child = subprocess.Popen._execute_child

    def started_then_stopped(self, args, *rest):
        start_child(self, args, *rest)
        if any(".walk.tmp" in str(a) for a in args):  # ffmpeg, writing our temporary file
            encoders.append(self.pid)
            os.kill(os.getpid(), signal.SIGHUP)  # as a signal landing while Popen waits for the exec

    monkeypatch.setattr(subprocess.Popen, "_execute_child", started_then_stopped)
    result = sacscale_main("render", checkpoint, "--output", folder / "walk.mp4", "--seconds", "2", "--width", "64",
                           "--height", "48", "--fps", "10")
    assert len(encoders) == 1
    _wait_gone(encoders[0])
    assert (result.returncode, result.stderr.strip()) == (129, "sacscale render: interrupted (SIGHUP)")
    assert list(folder.iterdir()) == []


def _wait_gone(pid: int) -> None:
    """Until the process has ended (reaped, or a zombie), whoever ends it."""
    deadline = time.monotonic() + GONE_WITHIN_S
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    break
        except FileNotFoundError:
            return
        time.sleep(0.05)
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass
