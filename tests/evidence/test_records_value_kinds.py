"""A recorded value is the one derived for it only if it is of the same JSON kind: Python
finds True == 1 == 1.0, so a flag written as 1, or a count as 2.0, passed every comparison
while the page, which reads the kind, counted the run otherwise."""

import json

import pytest
from set_copies import current_copy, remake_manifest

from sacscale.evidence.result import deep_differences, same_value
from sacscale.evidence.verify import verify

SET = "h200x1_shared_short"
RUN = "shared_r1_n2_shared"  # two ranks
META = f"runs/{RUN}/train_meta.json"


@pytest.mark.parametrize("a, b", [(True, 1), (1, 1.0), (180, 180.0), (False, 0), ([1, 2], [1, 2.0]),
                                  ({"a": True}, {"a": 1}), (None, 0), ("1", 1)])
def test_values_of_another_kind_differ(a, b):
    assert not same_value(a, b) and not same_value(b, a)


@pytest.mark.parametrize("a, b", [(True, True), (2, 2), (180.0, 180.0), ([1, "x"], (1, "x")),
                                  ({"a": [1.5]}, {"a": [1.5]}), (None, None)])
def test_values_of_one_kind_agree(a, b):
    assert same_value(a, b)


def test_a_stored_count_written_as_a_float_is_not_the_recomputed_count():
    assert deep_differences({"n": 2.0, "ok": 1}, {"n": 2, "ok": True})[0] == [
        "n: stored 2.0, recomputed 2", "ok: stored 1, recomputed true"]


def _edit_meta(root, edit):
    record = json.loads((root / META).read_text())
    edit(record)
    (root / META).write_text(json.dumps(record, indent=1))


@pytest.mark.parametrize("edit, says", [
    (lambda r: r.update(world_size=2.0),
     f"{RUN}: world size: plan.json says 2, train_meta.json says 2.0"),
    (lambda r: r.update(world_size=2.0),
     f"{RUN}: train_meta.json world_size 2.0, but the run's command (--devices 0,0) gives 2 rank(s)"),
    (lambda r: r["config"].update(compile=1),
     f"{RUN}: train_meta.json config.compile 1, but the run's command (parsed with the trainer's parser and "
     "defaults) gives True"),
    (lambda r: r["config"].update(timeout_s=180),
     f"{RUN}: train_meta.json config.timeout_s 180, but the run's command (parsed with the trainer's parser and "
     "defaults) gives 180.0"),
])
def test_a_value_of_another_kind_is_named(tmp_path, edit, says):
    root = current_copy(tmp_path, SET)
    _edit_meta(root, edit)
    remake_manifest(root)
    records = verify(root, report_pending=True).records
    assert says in records, records
