"""A README in the set's folder (results/<set>/): a file a repository browser shows first
when the set is opened, named README under any case and extension (readme.md, README.rst,
README.txt). No stage writes one: the older sets carry one written by hand beside their
evidence, which verify does not read, so it is named in the notes; its markup is held to
the report page's rules on what runs code or hides content (text of any extension is judged
as Markdown, which passes raw HTML through as a browser of the repository may render it). A
set of the current evidence format (evidence.json) holds only what its stages write, so a
README there is named with any other such file (sacscale.evidence.set_files)."""

from __future__ import annotations

import os
from pathlib import Path

from sacscale.evidence.report_html import active_markup_problems
from sacscale.reading import TooLarge, read_limited

NAME = "README.md"
# rendering its Markdown takes ~45 us a byte: a bound keeps verify to seconds (the committed
# READMEs are under 4 KB); one larger is named rather than judged
JUDGED_BYTES = 256 * 1024


def is_readme(name: str) -> bool:
    """Whether a repository browser shows the file as its folder's page: README, any case and extension."""
    return Path(name).name.split(".", 1)[0].lower() == "readme"


def readme_findings(root: Path, current_format: bool) -> tuple[list[str], list[str]]:
    """(problems, notes) on each README in an older set's folder; none where it has none
    (a current-format set's are named by set_files)."""
    if current_format or not root.is_dir():
        return [], []
    problems, notes = [], []
    for path in _readmes(root):
        found, note = _one_readme(path, f"results/{root.name}/{path.relative_to(root).as_posix()}")
        problems += found
        notes.append(note)
    return problems, notes


def _readmes(root: Path) -> list[Path]:
    """Every README in the set's folder or below it (a browser shows each as its folder's
    page); links are not followed into, a link named README is judged as one."""
    found = []
    for folder, subfolders, files in os.walk(root):
        paths = [Path(folder, name) for name in files + subfolders if is_readme(name)]
        found += [path for path in paths if path.is_symlink() or not path.is_dir()]
    return sorted(found)


def _one_readme(path: Path, rel: str) -> tuple[list[str], str]:
    note = f"{rel}: written by hand, not checked by verify: what it says is not the evidence's"
    try:
        text = read_limited(path, limit=JUDGED_BYTES).decode("utf-8")
    except TooLarge:
        return [f"{rel}: {path.lstat().st_size:,} bytes, over the {JUDGED_BYTES:,} verify judges of a hand-written "
                "README, so its markup was not checked"], note
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return [f"{rel}: cannot be read as UTF-8 text ({type(exc).__name__})"], note
    return active_markup_problems(rel, text), note
