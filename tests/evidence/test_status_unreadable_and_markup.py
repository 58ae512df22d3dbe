"""The status summary (python -m sacscale.evidence.status). Before: the "More GPUs against
one" line printed plan.json `iterations` and summary.json `ci_repeats` (and the interval text
made from it) as written, so `<script>` reached README.md; a string `ci_repeats` passed
unchecked. And a committed set whose environment.json (or summary.json, verify.json) could
not be read was listed as a set without that record, saying nothing."""

import json
import re
from pathlib import Path

import pytest

from sacscale.evidence import status
from set_copies import unpacked_checkout

REPO = Path(__file__).resolve().parents[2]
SET = "h200x2"  # two GPUs against one: the set the scaling line names
MARKUP = "<script>alert(2)</script>"


@pytest.fixture
def root(tmp_path):
    """An unpacked copy (no git: every set directory counts) with one multi-GPU set."""
    return unpacked_checkout(tmp_path, SET)


def edit(root, record, change):
    path = root / "results" / SET / record
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def _comparisons(key, value):
    return lambda summary: [c.update({key: value}) for c in summary["comparisons"]]


# every recorded value the scaling line reads, markup in each
_MARKUP = {
    "iterations": ("plan.json", lambda plan: plan.update(iterations=MARKUP)),
    "ci_repeats": ("summary.json", _comparisons("ci_repeats", MARKUP)),
    "ratio_ci95": ("summary.json", _comparisons("ratio_ci95", [MARKUP, 2.0])),
    "ratio_of_means": ("summary.json", _comparisons("ratio_of_means", MARKUP)),
    "config_n": ("summary.json", lambda s: [c.update(n=MARKUP) for c in s["configs"].values()]),
    "gpu_name": ("environment.json", lambda env: env["torch"]["gpus"][0].update(name=MARKUP)),
    "torch": ("environment.json", lambda env: env["versions"].update(torch=MARKUP)),
}


@pytest.mark.parametrize("record, change", _MARKUP.values(), ids=_MARKUP.keys())
def test_markup_in_a_recorded_value_never_reaches_the_block(root, capsys, record, change):
    edit(root, record, change)
    code = status.main(["--root", str(root)])
    out, err = capsys.readouterr()
    outside_code = re.sub(r"`[^`]*`", "", out)  # a code span shows its text as written: inert
    assert "<script" not in outside_code
    # a value of another type is named with its file, one line; a string is shown escaped
    assert code == 0 or (code == 2 and "\n" not in err.strip() and f"results/{SET}/" in err), err


def test_a_string_count_is_named_with_its_file(root, capsys):
    edit(root, "summary.json", _comparisons("ci_repeats", MARKUP))
    assert status.main(["--root", str(root)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"python -m sacscale.evidence.status: error: results/{SET}/summary.json: not a summary aggregate wrote "
        "(its 'comparisons[0].ci_repeats' is str)")


def test_string_iterations_are_named_with_their_file(root, capsys):
    edit(root, "plan.json", lambda plan: plan.update(iterations=MARKUP))
    assert status.main(["--root", str(root)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"python -m sacscale.evidence.status: error: results/{SET}/plan.json: 'iterations' is str, not an integer")


@pytest.mark.parametrize("record", ["environment.json", "summary.json", "verify.json", "plan.json"])
@pytest.mark.parametrize("content, reason", [
    (b'{"torch": ', "cannot be read as a record"),
    (b"\xff\xfe", "cannot be read as a record"),
    (b"[1, 2]", "a JSON list, not a record (an object)"),
])
def test_an_unreadable_record_is_named_not_taken_as_absent(root, capsys, record, content, reason):
    (root / "results" / SET / record).write_bytes(content)
    assert status.main(["--root", str(root)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"python -m sacscale.evidence.status: error: results/{SET}/{record}: {reason}"), err
    assert err.endswith(f"restore it from git (git checkout -- results/{SET}/{record})") and "\n" not in err


def test_a_missing_record_is_still_absent(root):
    (root / "results" / SET / "verify.json").unlink(missing_ok=True)
    (root / "results" / SET / "environment.json").unlink()
    assert f"`{SET}`" in status.render(root).splitlines()[-1]  # listed among the sets without one
