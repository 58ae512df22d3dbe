"""The workflow files are snakefmt-clean (the settings: pyproject.toml [tool.snakefmt]).
Skipped where snakefmt is not installed, unless SACSCALE_REQUIRE_SNAKEFMT=1 (CI sets it);
`snakemake --lint` is test_workflow_config.py::test_lint_is_clean."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pipeline_helpers import REPO


def _snakefmt():
    here = Path(sys.executable).parent / "snakefmt"
    found = str(here) if here.is_file() else shutil.which("snakefmt")
    if found is None:
        if os.environ.get("SACSCALE_REQUIRE_SNAKEFMT") == "1":
            pytest.fail("snakefmt is not installed and SACSCALE_REQUIRE_SNAKEFMT=1 (pip install snakefmt==2.1.0)")
        pytest.skip("snakefmt is not installed (pip install snakefmt==2.1.0)")
    return found


def test_workflow_files_are_snakefmt_clean():
    proc = subprocess.run([_snakefmt(), "--check", "Snakefile", "workflow/"], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr + "\nrun: snakefmt Snakefile workflow/"


def test_snakefmt_check_fails_on_a_badly_formatted_rule(tmp_path):
    """The check can fail: a rule with a mis-indented directive is reported."""
    (tmp_path / "pyproject.toml").write_text((REPO / "pyproject.toml").read_text())
    (tmp_path / "Snakefile").write_text('rule a:\n    output: "a.txt"\n    shell:   "touch {output}"\n')
    proc = subprocess.run([_snakefmt(), "--check", "Snakefile"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode != 0
