"""`python -m sacscale` is the `sacscale` command: same output, same exit statuses."""

import subprocess
import sys


def _run(*args):
    return subprocess.run([sys.executable, "-m", "sacscale", *args], capture_output=True, text=True, timeout=120)


def test_python_dash_m_runs_the_command():
    done = _run("--version")
    assert done.returncode == 0
    assert done.stdout.startswith("sacscale ")


def test_python_dash_m_gives_a_usage_error_its_exit_status():
    done = _run("no-such-command")
    assert done.returncode == 2
    assert "invalid choice: 'no-such-command'" in done.stderr
    assert "Traceback" not in done.stderr
