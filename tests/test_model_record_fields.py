"""prepare-model's model.json holds the fields sacscale.task.model_record names: the report
shows those only and verify names any other key, so a field added to the writer alone would
be named in every new set."""

import argparse
from types import SimpleNamespace

from sacscale.commands import _prepared_model
from sacscale.task.model_record import MODEL_RECORD_FIELDS


def test_prepare_model_writes_the_named_fields(tmp_path, monkeypatch):
    monkeypatch.setattr(_prepared_model.g1, "model_summary", lambda model: {})
    saved = tmp_path / "m.mjb"
    saved.write_bytes(b"x")
    args = argparse.Namespace(num_envs=2, threads=1, steps=3)
    record = _prepared_model.summary_record(args, saved, "g1_walk_flat.mjb", "0" * 64, {}, SimpleNamespace(),
                                            {"env_steps_per_s": 1.0, "mean_contacts": 2.0})
    assert tuple(record) == MODEL_RECORD_FIELDS
