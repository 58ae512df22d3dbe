"""docs/statistics.md shows both interval methods for every committed set, as the script
that computes them prints them now."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_statistics_document_holds_the_current_table():
    table = subprocess.run([sys.executable, "docs/interval_methods.py"], cwd=REPO, capture_output=True, text=True,
                           check=True, timeout=600).stdout
    document = (REPO / "docs" / "statistics.md").read_text()
    assert table.strip() in document, "regenerate the table: python docs/interval_methods.py"
    sets = sorted(p.name for p in (REPO / "results").iterdir() if p.is_dir())
    assert all(f"| {name} |" in table for name in sets)
