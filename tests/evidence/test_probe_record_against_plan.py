"""verify compares the correctness probe's settings with plan.json's `probe` (what the
pipeline's probe rule passed to `sacscale probe correctness`): a record rewritten to say it
probed 8 ranks over NCCL, hashed again, passed and the page said so."""

import pytest
from set_copies import records_after_edit


SET = "h200x1_shared_short"  # plan.json probe: devices "0,0", iterations 5, trainer_iterations 14


def _verify_after(tmp_path, edit):
    return records_after_edit(tmp_path, "correctness.json", edit, SET)


EIGHT = [f"cuda:{i}" for i in range(8)]


@pytest.mark.parametrize("edit, says", [
    (lambda r: r.update(world_size=8, devices=EIGHT, backend="nccl"),
     "correctness.json: devices ['cuda:0', 'cuda:1', "),
    (lambda r: r.update(world_size=8), "correctness.json: world_size 8, but plan.json's probe (devices '0,0') gives 2"),
    (lambda r: r.update(backend="nccl"), "correctness.json: backend 'nccl', but plan.json's probe (devices '0,0') "
                                         "gives 'gloo'"),
    (lambda r: r.update(iterations=50), "correctness.json: iterations 50, but plan.json's probe"),
    (lambda r: r["trainer_path"].update(iterations=20), "correctness.json: trainer_path.iterations 20, but "
                                                         "plan.json's probe (devices '0,0', trainer_iterations 14)"),
    (lambda r: r["trainer_path"].update(devices=["cuda:0"], world_size=1), "correctness.json: trainer_path.devices"),
    (lambda r: r.pop("trainer_path"), "correctness.json: no trainer_path, but plan.json's probe asks for 14"),
])
def test_probe_settings_other_than_the_plans_are_named(tmp_path, edit, says):
    records = _verify_after(tmp_path, edit)
    assert any(p.startswith(says) for p in records), records
