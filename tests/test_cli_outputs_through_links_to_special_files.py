"""A file output that is the user's own link to a FIFO or a device, one link or two: the
write replaced the link with a plain file (the FIFO never written, a reader waiting on it
never got the output), while the FIFO named directly and a link to a folder were refused.
Links are now followed for both rules: refused before any work, one line, exit 2."""

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from sacscale.cli import main

TOPOLOGY = Path(__file__).parent / "parallel" / "fixtures" / "topology"
REFUSED = "an output replaces a file, never a device, FIFO or socket"


def _plan_matrix(output: Path) -> list[str]:
    return ["plan-matrix", "--lscpu", str(TOPOLOGY / "h200x1.lscpu"), "--nvidia-smi-topo",
            str(TOPOLOGY / "h200x1.topo"), "--output", str(output)]


@pytest.mark.parametrize("hops", [1, 2])
def test_a_link_to_a_fifo_is_refused_and_kept(capsys, tmp_path, hops):
    fifo = tmp_path / "ff"
    os.mkfifo(fifo)
    names = ["ff", "fl1", "fl2"][:hops + 1]
    for target, link in zip(names, names[1:]):
        (tmp_path / link).symlink_to(target)
    given = tmp_path / names[-1]
    with pytest.raises(SystemExit) as info:
        main(_plan_matrix(given))
    err = capsys.readouterr().err.strip()
    assert info.value.code == 2
    assert err.endswith(f"sacscale plan-matrix: error: argument --output: {given} leads to a FIFO (a link to "
                        f"{names[-2]}): {REFUSED}"), err
    assert given.is_symlink() and stat.S_ISFIFO(os.stat(given).st_mode)


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")
def test_a_link_to_a_character_device_is_refused(tmp_path):
    os.mknod(tmp_path / "nul", 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a copy of /dev/null's node
    (tmp_path / "nl").symlink_to("nul")
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", *_plan_matrix(tmp_path / "nl")],
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr.strip().splitlines()[-1]) == (2, (
        f"sacscale plan-matrix: error: argument --output: {tmp_path}/nl leads to a character device (a link to "
        f"nul): {REFUSED}"))
    assert (tmp_path / "nl").is_symlink()
