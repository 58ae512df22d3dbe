"""`--sdm conda`: every job calls the environment's `sacscale` (never Snakemake's own Python
by path), and envs/sacscale.post-deploy.sh installs the project into a new environment.
(Creating the conda environment itself needs conda, which CI does not have.)"""

import os
import re
import shutil
import subprocess
import sys

import pytest
from pipeline_helpers import REPO, snakemake


def test_every_job_calls_sacscale_from_path(workflow_dir):
    proc = snakemake(workflow_dir, "-n", "-p", "--cores", "1")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    commands = [c for c in re.findall(r"^Shell command: (.*)$", out, flags=re.M) if c != "None"]  # None: run:
    assert len(commands) >= 10
    for cmd in commands:
        assert re.match(r"(timeout --foreground --kill-after=30 [0-9.]+ )?sacscale ", cmd), cmd
        assert sys.executable not in cmd and ".py " not in cmd, cmd


@pytest.mark.slow
def test_post_deploy_script_installs_the_project(tmp_path):
    """The script as Snakemake runs it: in the new environment (here a fresh virtual
    environment first on PATH), from the repository root."""
    repo = tmp_path / "repo"
    shutil.copytree(REPO / "src", repo / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(REPO / name, repo / name)
    env_dir = tmp_path / "env"
    subprocess.run(["python3", "-m", "venv", str(env_dir)], check=True, timeout=300)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{env['PATH']}"
    script = REPO / "envs" / "sacscale.post-deploy.sh"
    proc = subprocess.run(["bash", str(script)], cwd=repo, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    where = subprocess.run([str(env_dir / "bin" / "python"), "-c", "import sacscale; print(sacscale.__file__)"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert where.stdout.strip() == str(repo / "src" / "sacscale" / "__init__.py"), where.stderr  # editable
    assert (env_dir / "bin" / "sacscale").is_file()

    wrong = subprocess.run(["bash", str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert wrong.returncode == 1 and "is not the sacscale repository root" in wrong.stderr
