"""The README stays a first page (short, the two commands as CI runs them), and every
link in it and in docs/ leads somewhere that exists."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
INSTALL = "python3 -m venv .venv && . .venv/bin/activate && pip install torch==2.13.0 && pip install -e . && "


def test_readme_is_short_and_holds_the_two_commands():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 150
    assert INSTALL + "snakemake --cores all\n" in text
    # CI runs this line
    assert (INSTALL.replace("-e .", '-e ".[test]"')
            + "python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder\n") in text


def _anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _links(text: str):
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # code blocks hold no links
    text = re.sub(r"`[^`\n]*`", "", text)
    return re.findall(r"\]\(([^)\s]+)\)", text)


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(doc):
    broken = []
    for target in _links(doc.read_text()):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto: not checked here
        path, _, anchor = target.partition("#")
        dest = (doc.parent / path).resolve() if path else doc
        if not dest.exists():
            broken.append(target)
        elif anchor and dest.suffix == ".md":
            headings = [_anchor(h) for h in re.findall(r"^#+ (.+)$", dest.read_text(), flags=re.M)]
            if anchor not in headings:
                broken.append(target)
    assert not broken, f"{doc.name}: broken links {broken}"


def test_readme_links_every_document():
    text = (ROOT / "README.md").read_text()
    for doc in sorted((ROOT / "docs").glob("*.md")):
        assert f"](docs/{doc.name})" in text, f"README does not link docs/{doc.name}"
