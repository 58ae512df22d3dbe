"""The MP4 writer against ffmpegs that misbehave (stand-in programs in its place):
- one that takes no frames (hung, or stopped): each frame's write to it blocks, and the write
  ran with stop signals held, so SIGTERM and SIGINT were held for good and only SIGKILL ended
  the render, leaving its temporary file, its lock and the ffmpeg; now a stop ends it;
- one that ends with status 0 and writes nothing: an empty "video" was put in place and
  reported written; now it is named;
- one that fails on a full disk: named by its exit status only (exit 1); now as the disk's
  refusal of the output, as the other formats are (`PATH: no space left on the device`);
- one that exits with an output errno as its status (256 - errno: 228 for a full disk),
  before or after its last frame: named as its status and ffmpeg's text only (exit 1); now
  as that errno's refusal of the output."""

import errno
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from sacscale.eval import video
from sacscale.eval.gl_backend import RenderError

FRAME = np.zeros((240, 320, 3), dtype=np.uint8)  # 230 KB: more than a pipe holds


def _stand_in(tmp_path, body: str):
    script = tmp_path / "ffmpeg"
    script.write_text("#!/bin/sh\n" + body + "\n")
    script.chmod(0o755)
    return str(script)


def test_a_stop_ends_a_writer_whose_ffmpeg_takes_no_frames(tmp_path):
    pid_file = tmp_path / "ffmpeg.pid"
    exe = _stand_in(tmp_path, f"echo $$ > {pid_file}\nexec sleep 600")
    out = tmp_path / "v.mp4"
    code = textwrap.dedent(f"""
        import os, signal, threading
        import numpy as np
        from pathlib import Path
        from sacscale.eval.video import GuardedWriter
        from sacscale.stopping import Interrupted, raised_as_interrupted
        out = Path({str(out)!r})
        writer = GuardedWriter(out, 10.0, out)
        threading.Timer(2.0, os.kill, (os.getpid(), signal.SIGTERM)).start()
        try:
            with raised_as_interrupted():
                try:
                    for _ in range(20):
                        writer.append(np.zeros((240, 320, 3), dtype=np.uint8))
                finally:
                    writer.drop()
        except Interrupted:
            print("stopped")
        """)
    env = {**os.environ, "IMAGEIO_FFMPEG_EXE": exe, "PYTHONPATH": os.pathsep.join(sys.path)}
    try:
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("the stop was held while a frame waited for an ffmpeg that takes none")
    finally:
        if pid_file.exists():
            _end(int(pid_file.read_text()))
    assert done.stdout.strip() == "stopped", done.stderr
    assert not _alive(int(pid_file.read_text()))


def test_an_ffmpeg_that_writes_nothing_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("IMAGEIO_FFMPEG_EXE", _stand_in(tmp_path, "cat > /dev/null\nexit 0"))
    out = tmp_path / "v.mp4"
    out.touch()  # as render's temporary file, made before the writer
    writer = video.GuardedWriter(out, 10.0, out)
    writer.append(FRAME)
    with pytest.raises(RenderError, match="ffmpeg ended with exit status 0 but wrote no video"):
        writer.close()


def test_an_ffmpeg_failing_on_a_full_disk_is_named_as_the_disks_refusal(tmp_path, monkeypatch):
    monkeypatch.setenv("IMAGEIO_FFMPEG_EXE", _stand_in(tmp_path, "cat > /dev/null\nexit 228"))
    full = os.statvfs_result((4096, 4096, 1000, 0, 0, 1000, 10, 10, 0, 255))  # no block left
    monkeypatch.setattr(video.os, "statvfs", lambda path: full)
    out = tmp_path / "v.mp4"
    writer = video.GuardedWriter(tmp_path / ".v.tmp1.2.mp4", 10.0, out)
    writer.append(FRAME)
    with pytest.raises(OSError) as refused:
        writer.close()
    assert (refused.value.errno, refused.value.filename) == (errno.ENOSPC, str(out))


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES])
@pytest.mark.parametrize("reads", [True, False], ids=["at-close", "mid-frames"])
def test_an_ffmpeg_exiting_with_an_output_errno_is_named_as_the_disks_refusal(tmp_path, monkeypatch, code, reads):
    # ffmpeg exits 256 - errno (228 for ENOSPC), whether it fails at the end or while frames
    # still come; the disk here has room, so only the status says why
    body = ("cat > /dev/null\n" if reads else "") + f"exit {256 - code}"
    monkeypatch.setenv("IMAGEIO_FFMPEG_EXE", _stand_in(tmp_path, body))
    out = tmp_path / "v.mp4"
    writer = video.GuardedWriter(tmp_path / ".v.tmp1.2.mp4", 10.0, out)
    with pytest.raises(OSError) as refused:
        for _ in range(20):
            writer.append(FRAME)
        writer.close()
    assert (refused.value.errno, refused.value.filename) == (code, str(out))


def test_an_ffmpeg_failing_with_room_on_the_disk_is_named_by_its_status(tmp_path, monkeypatch):
    monkeypatch.setenv("IMAGEIO_FFMPEG_EXE", _stand_in(tmp_path, "cat > /dev/null\nexit 3"))
    out = tmp_path / "v.mp4"
    writer = video.GuardedWriter(out, 10.0, out)
    writer.append(FRAME)
    with pytest.raises(RenderError, match="ffmpeg ended with exit status 3"):
        writer.close()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _end(pid: int) -> None:
    try:
        os.kill(pid, 9)
    except ProcessLookupError:
        pass
