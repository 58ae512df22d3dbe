"""correctness.json's learner_overrides (the learner settings a probe used in place of the
trained networks'): the probe the pipeline runs passes none, and the page shows the field as
it is, so one put into the record (a sentence, or smaller networks) is named."""

import json

import pytest
from set_copies import assert_named, records_after_edit, REPO

from sacscale.evidence.probe_overrides import override_problems

CLAIM = "Two GPUs give a 9.9x speed-up over one"

CASES = {
    "a sentence under a key of its own": ({"note": CLAIM}, "learner_overrides: 'note' is not a learner setting"),
    "a sentence as a network's sizes": ({"actor_hidden": CLAIM}, "learner_overrides: actor_hidden \"Two GPUs"),
    "a sentence as the whole field": (CLAIM, "learner_overrides: \"Two GPUs"),
    "smaller networks": ({"actor_hidden": [16, 16], "obs_norm": True}, "learner_overrides {\"actor_hidden\""),
}


@pytest.mark.parametrize("case", CASES)
def test_learner_overrides_are_named(case):
    value, says = CASES[case]
    found = override_problems({"pass": True, "learner_overrides": value})
    assert found and found[0].startswith(says), found
    if isinstance(value, dict):
        assert found[-1].endswith("passes none (it probes the networks that are trained)")


def test_no_committed_probe_record_holds_any():
    for path in sorted((REPO / "results").glob("*/correctness.json")):
        assert override_problems(json.loads(path.read_text())) == [], path


def test_verify_names_a_sentence_in_them(tmp_path):
    records = records_after_edit(tmp_path, "correctness.json",
                                 lambda r: r.__setitem__("learner_overrides", {"note": CLAIM}), "h200x1_shared_short")
    assert_named(records, "correctness.json: learner_overrides: 'note' is not a learner setting",
                 f'correctness.json: learner_overrides {{"note": "{CLAIM}"}}, but the probe command the pipeline '
                 "runs passes none")
