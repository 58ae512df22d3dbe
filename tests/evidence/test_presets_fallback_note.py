"""Where the set's commit cannot be read, plan.json's description is compared with this
checkout's presets.yaml: a set planned with other words would pass or fail on today's. That
fallback was silent where the words matched; it is a note, naming why."""

import json
import shutil

from set_copies import REPO

from sacscale.evidence.preset_record import preset_findings
from sacscale.evidence.verify import verify

SET = "h200x1_shared_short"


def test_the_checkouts_presets_as_the_reference_are_a_note(tmp_path):
    (tmp_path / "workflow").mkdir()
    shutil.copy(REPO / "workflow" / "presets.yaml", tmp_path / "workflow" / "presets.yaml")
    root = REPO / "results" / SET
    plan = json.loads((root / "plan.json").read_text())
    env = json.loads((root / "environment.json").read_text())
    _, _, notes = preset_findings(root, plan, env, code_root=tmp_path)
    assert notes == ["plan.json description: compared with this checkout's workflow/presets.yaml (the set's commit "
                     "881e5c75bedf cannot be read from its git history), not with presets.yaml as the set's commit "
                     "holds it"]


def test_a_set_without_a_commit_says_so_among_verifys_notes():
    result = verify(REPO / "results" / "h200_ref_pair_partial")
    assert ("plan.json description: compared with this checkout's workflow/presets.yaml (environment.json records "
            "no commit), not with presets.yaml as the set's commit holds it") in result.notes
