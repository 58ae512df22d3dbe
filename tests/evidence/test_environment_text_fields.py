"""environment.json's text fields that the page shows as they are: a sentence put into the
lscpu table, the learner module's path or cuDNN's version verified and showed on the page.
Each is held to what verify-env writes there (in an older set, a note)."""

import json
import shutil
from pathlib import Path

import pytest

from sacscale.evidence.environment_text import environment_text_findings

REPO = Path(__file__).resolve().parents[2]
CLAIM = "Two GPUs give a 9.9x speed-up over one"


def _env():
    return json.loads((REPO / "results" / "h200x1_shared_short" / "environment.json").read_text())


def _edited(edit):
    env = _env()
    edit(env)
    return env


def _row_added(line):
    return lambda e: e["cpu"].__setitem__("layout", e["cpu"]["layout"] + "\n" + line)


CASES = {
    "a sentence after the table": (_row_added(CLAIM), "cpu.layout line"),
    "a claim in CPU and '-' columns": (_row_added("9.9x - faster now"), "cpu.layout line"),
    "another header": (lambda e: e["cpu"].__setitem__("layout", CLAIM + "\n0 0 0 0"), "does not start with lscpu"),
    "a sentence for the learner's path": (lambda e: e["learner"].__setitem__("file", CLAIM), "learner.file"),
    "a sentence after cuDNN's number": (lambda e: e["torch"].__setitem__("cudnn", f"91300 ({CLAIM})"), "torch.cudnn"),
}


@pytest.mark.parametrize("case", CASES)
def test_a_sentence_in_a_shown_text_field_is_named(case):
    edit, says = CASES[case]
    problems, notes = environment_text_findings(_edited(edit), strict=True)
    assert len(problems) == 1 and says in problems[0] and not notes, problems
    problems, notes = environment_text_findings(_edited(edit), strict=False)
    assert not problems and len(notes) == 1 and notes[0].endswith("(an older set: not checked)")


def test_what_verify_env_writes_passes_in_every_committed_set():
    for path in sorted((REPO / "results").glob("*/environment.json")):
        assert environment_text_findings(json.loads(path.read_text()), strict=True) == ([], []), path


def test_verify_names_it_in_a_current_set(tmp_path, sacscale_main):
    root = tmp_path / "results" / "h200x1_shared_short"
    shutil.copytree(REPO / "results" / "h200x1_shared_short", root)
    shutil.copytree(REPO / "reports" / "h200x1_shared_short", tmp_path / "reports" / "h200x1_shared_short")
    env = _env()
    env["torch"]["cudnn"] = f"91300 ({CLAIM})"
    (root / "environment.json").write_text(json.dumps(env, indent=2))
    assert sacscale_main("manifest", root).returncode == 0
    done = sacscale_main("verify", root)
    assert done.returncode == 1
    assert f"environment.json: torch.cudnn '91300 ({CLAIM})' is not cuDNN's version number" in done.stdout + done.stderr
