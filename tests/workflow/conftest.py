import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# tests/synthetic_runs.py: synthetic event files shared by the pipeline's tests
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

REPO = Path(__file__).resolve().parents[2]
WORKFLOW_FILES = ["Snakefile", "config.yaml", "workflow", "profiles", "envs"]
SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")


def copy_workflow(dest: Path) -> Path:
    """The repository's workflow files, copied into dest (the package stays installed)."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in WORKFLOW_FILES:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dest / name)
    return dest


def snakemake(workdir: Path, *args: str, timeout: float = 600, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([SNAKEMAKE, *args], cwd=workdir, capture_output=True, text=True, timeout=timeout, env=env)


@pytest.fixture
def workflow_dir(tmp_path):
    return copy_workflow(tmp_path / "wf")
