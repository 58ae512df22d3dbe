"""The evidence bundles committed under results/ verify: every file hashes as its manifest
says and every run's metric recomputes from its event files (what `snakemake verify` runs)."""

from pathlib import Path

import pytest

from sacscale.evidence.verify import verify

RESULTS = Path(__file__).resolve().parents[2] / "results"
BUNDLES = ["h200x1", "h200x2", "h200x2_bench", "h200_learning", "h200_halves_bench"]  # measured on the lent GPU machines (docs/benchmarks.md)


@pytest.mark.parametrize("run_set", BUNDLES)
def test_committed_bundle_verifies(run_set):
    result = verify(RESULTS / run_set)
    assert result.ok, result.problems()
    assert result.runs_checked >= 2 and result.files_checked >= 9
