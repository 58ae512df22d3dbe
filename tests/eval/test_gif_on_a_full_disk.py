"""A GIF written onto a full disk: one error, no traceback after it. imageio's writer, failing
on the full disk, failed again when Python collected it at exit and printed an "Exception
ignored" traceback after the command's one-line error."""

import os
import subprocess
import sys

import pytest

WRITE_GIF = """
import errno
from pathlib import Path
import numpy as np
from sacscale.eval.video import _GifWriter
writer = _GifWriter(Path("/dev/full"), 12.0)
for k in range(4):
    writer.append(np.full((32, 32, 3), 40 * k, dtype=np.uint8))
try:
    writer.close()
except OSError as exc:
    print("refused:", errno.errorcode[exc.errno])
"""


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
def test_a_gif_onto_a_full_disk_is_one_error_and_no_traceback():
    proc = subprocess.run([sys.executable, "-c", WRITE_GIF], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "refused: ENOSPC"
    assert "Exception ignored" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
