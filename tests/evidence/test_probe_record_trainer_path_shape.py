"""correctness.json `trainer_path` of the wrong JSON type is named with its field: a list
ended verify in its catch-all, `unexpected structure in the set's JSON (AttributeError: 'list'
object has no attribute 'get')`, naming no file or field; the catch-all now also says the
checks after it were not done, as its other branch does."""

import json

import pytest
from set_copies import current_copy, remake_manifest

from sacscale.evidence.verify import _unexpected, verify

SET = "h200x1_shared_short"


@pytest.mark.parametrize("value, shown", [([], "list"), ("yes", "string"), (3, "number")])
def test_a_trainer_path_not_an_object_is_named(tmp_path, value, shown):
    root = current_copy(tmp_path, SET)
    record = json.loads((root / "correctness.json").read_text())
    (root / "correctness.json").write_text(json.dumps({**record, "trainer_path": value}))
    remake_manifest(root)
    result = verify(root)
    assert result.structure == []
    assert [p for p in result.records if "correctness.json" in p] == [
        f"correctness.json: trainer_path: a JSON {shown}, where the trainer path's record (an object) goes"]


def test_the_catch_all_says_the_checks_after_it_were_not_done():
    assert _unexpected(AttributeError("'list' object has no attribute 'get'")) == (
        "unexpected structure in the set's JSON (AttributeError: 'list' object has no attribute 'get'); the checks "
        "after it were not done")
