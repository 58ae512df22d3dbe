"""A set of the current evidence format (evidence.json) holds only what its stages write,
but only a file named exactly README.md was refused: `readme.md`, `Readme.md` or any other
file added beside the evidence, with the manifest and verify.json's count made again, passed
verify unread; with only the count left, the line named the count, not the file. Each such
file is named, as one in the report folder is."""

import json
from pathlib import Path

import pytest
from set_copies import edit_record, remake_manifest

from sacscale.evidence.set_files import set_files_findings
from sacscale.evidence.verify import verify

REPO = Path(__file__).resolve().parents[2]
SET = "h200x1_shared_short"
CLAIM = "Two GPUs give a 9.9x speed-up.\n<img src=x onerror=alert(1)>\n"
NOT_WRITTEN = "not a file any stage writes (a set of this evidence format holds only those), so nothing checks what " \
              "it says"


def _scope_lines(root: Path, files: dict[str, str], count: bool = True) -> list[str]:
    for rel, text in files.items():
        (root / rel).write_text(text)
    if count:  # as a forger would: the count verify.json records made to match
        edit_record(root, "verify.json", lambda v: v.update(files_checked=v["files_checked"] + len(files)))
    remake_manifest(root)
    return [p for p in verify(root, recompute=False).problems() if p.startswith("scope: ")]


@pytest.mark.parametrize("name", ["readme.md", "Readme.md", "README.rst", "README"])
def test_a_readme_under_any_spelling_is_named(work, name):
    assert _scope_lines(work, {name: CLAIM}) == [
        f"scope: results/{SET}/{name}: {NOT_WRITTEN}; a repository browser shows it first"]


def test_any_other_file_in_the_set_or_its_record_folders_is_named(work):
    lines = _scope_lines(work, {"notes.txt": "x\n", "metrics/extra.txt": "x\n", "model/README.md": CLAIM})
    assert lines == [f"scope: results/{SET}/metrics/extra.txt: {NOT_WRITTEN}",
                     f"scope: results/{SET}/model/README.md: {NOT_WRITTEN}; a repository browser shows it first",
                     f"scope: results/{SET}/notes.txt: {NOT_WRITTEN}"]


def test_a_file_in_runs_beside_the_run_folders_and_a_readme_inside_one_are_named(work):
    run = sorted(p.name for p in (work / "runs").iterdir())[0]
    lines = _scope_lines(work, {"runs/README.md": CLAIM, f"runs/{run}/readme.txt": CLAIM})
    assert lines == [f"scope: results/{SET}/runs/README.md: {NOT_WRITTEN}; a repository browser shows it first",
                     f"scope: results/{SET}/runs/{run}/readme.txt: {NOT_WRITTEN}; a repository browser shows it "
                     "first"]


def test_with_only_the_count_wrong_the_file_is_named_too(work):
    assert _scope_lines(work, {"readme.md": CLAIM}, count=False) == [
        f"scope: results/{SET}/readme.md: {NOT_WRITTEN}; a repository browser shows it first"]


def _current_sets() -> list[Path]:
    return sorted(p.parent for p in (REPO / "results").glob("*/evidence.json"))


@pytest.mark.parametrize("root", _current_sets(), ids=lambda p: p.name)
def test_every_committed_current_set_holds_only_what_its_stages_write(root):
    assert json.loads((root / "evidence.json").read_text())["format"] >= 2
    assert set_files_findings(root) == []
