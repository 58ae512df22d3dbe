"""A command's error line names what it was given, and a name holding a line break must not
write a line of its own (a forged second line in a log or a terminal): every command's
error lines go through one writer that escapes control characters (sacscale.usage.say)."""

import subprocess
import sys

import pytest

from cli_runs import REPO

FORGED = "verified 99 files: OK"


@pytest.mark.parametrize("argv", [
    ["reference-env", "--output", "{tmp}/env.json", "--python", f"/nonexistent\n{FORGED}/bin/python"],
    ["evaluate", f"/nonexistent\n{FORGED}.pt", "--output", "{tmp}/eval.json"],
], ids=["reference-env", "evaluate"])
def test_a_line_break_in_a_value_stays_in_its_line(tmp_path, argv):
    argv = [arg.replace("{tmp}", str(tmp_path)) for arg in argv]
    done = subprocess.run([sys.executable, "-m", "sacscale", *argv], capture_output=True, text=True,
                          timeout=300, cwd=REPO)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert not any(line.startswith(FORGED) for line in lines)
