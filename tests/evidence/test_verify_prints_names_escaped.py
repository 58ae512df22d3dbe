"""verify prints the set's folder with a newline or escape sequence in its name escaped:
printed raw, a folder's name could forge verify's lines on the terminal."""

import subprocess
import sys

from set_copies import copy_committed_set

SET = "h200x1_shared_short"


def test_a_newline_in_the_sets_path_is_printed_escaped(tmp_path):
    parent = tmp_path / "odd\nsacscale verify: 0 problem(s)\x1b[2K"
    parent.mkdir()
    root = copy_committed_set(parent, SET)
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", "verify", str(root), "--no-metrics"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    last = done.stdout.splitlines()[-1]
    assert last.startswith("verified ") and last.endswith(
        f"under {tmp_path}/odd\\nsacscale verify: 0 problem(s)\\x1b[2K/repo/results/{SET}"), done.stdout
    assert "\x1b" not in done.stdout
