"""Every module of the package fits in a reader's head: at most 500 lines (ruff's C901
holds each function to complexity 15; this holds the files)."""

from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "sacscale"
LIMIT = 500


def test_no_source_file_above_the_limit():
    sizes = {p.relative_to(SRC).as_posix(): len(p.read_text().splitlines()) for p in SRC.rglob("*.py")}
    assert len(sizes) > 50  # the package was found
    assert {name: n for name, n in sizes.items() if n > LIMIT} == {}
