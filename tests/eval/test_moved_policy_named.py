"""A throughput run's policy, which the pipeline's manifest stage moves out of the set
(logs/<set>/left_out/<run>/final.pt), was asked of evaluate and render by its run folder and
named only as missing: the refusal says where it went."""

import pytest

from sacscale.eval.evaluate_checks import CheckpointError, resolve_checkpoint


def _set_with_a_moved_policy(root):
    (root / "results" / "s" / "runs" / "r1" / "checkpoints").mkdir(parents=True)
    moved = root / "logs" / "s" / "left_out" / "r1" / "final.pt"
    moved.parent.mkdir(parents=True)
    moved.write_bytes(b"x")
    return moved


@pytest.mark.parametrize("given", ["results/s/runs/r1", "results/s/runs/r1/checkpoints/final.pt"])
def test_a_moved_policy_is_named_where_it_went(tmp_path, monkeypatch, given):
    _set_with_a_moved_policy(tmp_path)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CheckpointError) as caught:
        resolve_checkpoint(given)
    assert str(caught.value) == (
        "results/s/runs/r1/checkpoints/final.pt: no such checkpoint file; the pipeline keeps only the policies a "
        "claim rests on in the set and moved this run's to logs/s/left_out/r1/final.pt")


def test_the_same_from_another_folder_names_the_whole_path(tmp_path):
    moved = _set_with_a_moved_policy(tmp_path)
    with pytest.raises(CheckpointError, match=f"moved this run's to {moved}$"):
        resolve_checkpoint(tmp_path / "results" / "s" / "runs" / "r1")


def test_a_missing_policy_with_none_moved_is_only_missing(tmp_path, monkeypatch):
    (tmp_path / "results" / "s" / "runs" / "r1" / "checkpoints").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CheckpointError) as caught:
        resolve_checkpoint("results/s/runs/r1")
    assert str(caught.value) == "results/s/runs/r1/checkpoints/final.pt: no such checkpoint file"
