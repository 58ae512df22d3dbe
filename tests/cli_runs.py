"""What the command-line tests of bad input share: the CLI run as a user runs
it, the one-line refusal they expect, and a copy of a committed metrics file to edit."""

import json
import os
import subprocess
import sys
from pathlib import Path

from sacscale.finished_sets import PIPELINE_SET

REPO = Path(__file__).resolve().parents[1]
SET = "h200x1_shared_short"


def sacscale(*argv, cwd=None, pipeline_set=None):
    """The CLI as a user runs it; with `pipeline_set`, as the pipeline's job building that set
    runs it (the workflow names the set in the jobs' environment, and only its jobs write
    into a planned set that is not finished)."""
    env = {k: v for k, v in os.environ.items() if k != PIPELINE_SET}
    if pipeline_set is not None:
        env[PIPELINE_SET] = pipeline_set
    return subprocess.run([sys.executable, "-m", "sacscale.cli", *map(str, argv)], capture_output=True, text=True,
                          timeout=120, cwd=cwd, env=env)


def other_users_link(link: Path, target: Path, uid: int = 1001) -> Path:
    """`link` made a symbolic link to `target` owned by another local user (`uid`); root
    only (lchown). Its folder is made sticky and world-writable, as /tmp is."""
    link.parent.mkdir(mode=0o1777, exist_ok=True)
    link.parent.chmod(0o1777)
    link.symlink_to(target)
    os.lchown(link, uid, uid)
    return link


def one_line(done, says):
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert says in done.stderr, done.stderr


def edited_metrics(tmp_path, edit):
    """A copy of one committed metrics record, changed by `edit` (record -> record)."""
    record = json.loads((REPO / "results" / SET / "metrics" / "shared_r1_n1_pool7.json").read_text())
    path = tmp_path / "m.json"
    path.write_text(json.dumps(edit(record)))
    return path


def record_run_with_machine_lock(tmp_path: Path, env: dict) -> subprocess.CompletedProcess:
    """`record-run --machine-lock` of a trivial command under `env` (the lock folder settings)."""
    run_dir = tmp_path / "elsewhere" / "runs" / "q_r1_n1"
    cmd = [sys.executable, "-m", "sacscale.cli", "record-run", "--run-dir", str(run_dir),
           "--work-dir", str(run_dir.parent / ".q_r1_n1.partial"), "--attic", str(tmp_path / "logs"),
           "--resolved-json", json.dumps({"run": "q_r1_n1", "run_set": "B", "seed": 1}), "--timeout", "60",
           "--machine-lock", "--", sys.executable, "-c", "pass"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env={**os.environ, **env})
