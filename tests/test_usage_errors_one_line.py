"""A usage error is one line, exit 2, in every command line the project reads: `sacscale`
and each of its commands, the status summary's module and the pipeline's run wrapper
(argparse prints its usage lines above the error)."""

import subprocess
import sys

import pytest

from cli_runs import REPO

COMMANDS = {
    "sacscale": [sys.executable, "-m", "sacscale.cli", "aggregate", "--no-such-option"],
    "status": [sys.executable, "-m", "sacscale.evidence.status", "--no-such-option"],
    "run wrapper": [sys.executable, str(REPO / "workflow" / "scripts" / "run_training.py"), "--no-such-option"],
}


@pytest.mark.parametrize("name", COMMANDS)
def test_a_usage_error_is_one_line(name):
    done = subprocess.run(COMMANDS[name], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert ": error: " in lines[0] and not lines[0].startswith("usage:")


@pytest.mark.parametrize("name", COMMANDS)
def test_help_still_shows_the_usage(name):
    argv = COMMANDS[name][:-1] + ["--help"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: ")


def test_a_closed_standard_output_is_named_in_one_line():
    """`sacscale verify S >&-`: Python gives None for a closed stream, and the first print
    ended in `AttributeError: 'NoneType' object has no attribute 'write' (unexpected)`."""
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", "--version"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, timeout=120, cwd=REPO,
                          preexec_fn=lambda: __import__("os").close(1))
    assert done.returncode == 2, done.stderr
    assert done.stderr == ("sacscale: error: standard output is closed; give the command somewhere to write "
                           "(a file, /dev/null)\n")
