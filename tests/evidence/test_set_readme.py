"""A README.md in results/<set>/, which a repository browser shows first, with claims the
evidence does not give and raw HTML, hashed into the manifest: verify passed it without a
word, while the same page in reports/<set>/ is named. An older set's hand-written README is
now named in the notes as not checked, and its markup that runs code or hides content is a
problem; a set of the current evidence format, whose stages write no README, is named."""

from pathlib import Path

import pytest
from set_copies import copy_committed_set, remake_manifest

from sacscale.evidence.set_readme import JUDGED_BYTES, readme_findings
from sacscale.evidence.verify import verify

REPO = Path(__file__).resolve().parents[2]

CLAIM = "**Verified: two GPUs give a 9.9x speed-up (95% CI 9.5 .. 10.2); sacscale verify passes.**\n"
OLDER = "h200x1_final"  # an older set, with its own hand-written README.md


def _verified_with_readme(root, text: str, name: str = "README.md"):
    (root / name).write_text(text)
    remake_manifest(root)
    return verify(root, recompute=False)


def test_an_older_sets_readme_is_named_as_unchecked(tmp_path):
    root = copy_committed_set(tmp_path, OLDER)
    result = _verified_with_readme(root, CLAIM)
    assert f"results/{OLDER}/README.md: written by hand, not checked by verify: what it says is not the " \
           "evidence's" in result.notes
    assert not [p for p in result.problems() if "README" in p]


def test_markup_that_runs_code_in_a_readme_is_named(tmp_path):
    root = copy_committed_set(tmp_path, OLDER)
    result = _verified_with_readme(root, CLAIM + '<img src=x onerror=alert(1)>\n<a href="javascript:go()">x</a>\n')
    lines = [p for p in result.problems() if "README" in p]
    assert lines == [
        f"scope: results/{OLDER}/README.md: an event handler 'onerror' (it could run code or hide what the page "
        "shows)",
        f"scope: results/{OLDER}/README.md: a href that runs or shows another page ('javascript:go()') (it could "
        "run code or hide what the page shows)"]


def test_a_readme_in_a_current_set_is_named(work):
    result = _verified_with_readme(work, CLAIM)
    assert [p for p in result.problems() if "README" in p] == [
        "scope: results/h200x1_shared_short/README.md: not a file any stage writes (a set of this evidence format "
        "holds only those), so nothing checks what it says; a repository browser shows it first"]


@pytest.mark.parametrize("root", sorted(p.parent for p in (REPO / "results").glob("*/README.md")),
                         ids=lambda p: p.name)
def test_every_committed_readme_holds_no_markup_that_runs_or_hides(root):
    # their tables' aligned columns come out of Markdown as text-align styles, which hide nothing
    problems, notes = readme_findings(root, current_format=False)
    assert problems == [] and len(notes) == 1


def test_markup_that_hides_text_in_a_readme_is_named(tmp_path):
    root = copy_committed_set(tmp_path, OLDER)
    result = _verified_with_readme(root, CLAIM + "| a | b |\n|---|---:|\n| 1 | 2 |\n\n"
                                   '<p hidden>x</p>\n<font color="white">y</font>\n'
                                   '<meta http-equiv="refresh" content="0; url=https://example.org">\n')
    lines = [p for p in result.problems() if "README" in p]
    assert [line.split(": ", 2)[2] for line in lines] == [
        "a hidden <p> (it could run code or hide what the page shows)",
        "a <font> element (it could run code or hide what the page shows)",
        "a <meta> element (it could run code or hide what the page shows)"]


@pytest.mark.parametrize("name", ["readme.md", "README.rst", "README.txt"])
def test_an_older_sets_readme_under_another_name_is_noted_and_judged(tmp_path, name):
    root = copy_committed_set(tmp_path, OLDER)
    (root / "README.md").unlink()
    result = _verified_with_readme(root, CLAIM + "<img src=x onerror=alert(1)>\n", name)
    assert f"results/{OLDER}/{name}: written by hand, not checked by verify: what it says is not the evidence's" \
           in result.notes
    assert [p for p in result.problems() if "README" in p.upper()] == [
        f"scope: results/{OLDER}/{name}: an event handler 'onerror' (it could run code or hide what the page shows)"]


def test_a_readme_too_large_to_judge_in_seconds_is_named_unjudged(tmp_path):
    root = copy_committed_set(tmp_path, OLDER)
    text = "<b>x</b>" * (JUDGED_BYTES // 8 + 1)
    assert [p for p in readme_findings(root, False)[0]] == []
    (root / "README.md").write_text(text)
    problems, notes = readme_findings(root, current_format=False)
    assert problems == [f"results/{OLDER}/README.md: {len(text):,} bytes, over the {JUDGED_BYTES:,} verify judges of a "
                        "hand-written README, so its markup was not checked"] and len(notes) == 1


def test_a_readme_below_an_older_sets_top_folder_is_noted_and_judged(tmp_path):
    root = copy_committed_set(tmp_path, OLDER)
    (root / "pipeline").mkdir(exist_ok=True)
    (root / "pipeline" / "README.md").write_text(CLAIM + "<img src=x onerror=alert(1)>\n")
    remake_manifest(root)
    result = verify(root, recompute=False)
    assert f"results/{OLDER}/pipeline/README.md: written by hand, not checked by verify: what it says is not the " \
           "evidence's" in result.notes
    assert [p for p in result.problems() if "README" in p] == [
        f"scope: results/{OLDER}/pipeline/README.md: an event handler 'onerror' (it could run code or hide what the "
        "page shows)"]
