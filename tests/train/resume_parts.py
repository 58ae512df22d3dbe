"""A run folder made by hand for the tests of what `train --resume` judges in it: the
refusal comes before any of it is read."""

from pathlib import Path

WAY_OUT = "; resume a copy of the run in a folder of your own"


def make_run_dir(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    for folder in ("checkpoints", "tb/rank0"):
        (run / folder).mkdir(parents=True)
    (run / "train_meta.json").write_text("{}")
    (run / "checkpoints" / "final.pt").write_bytes(b"x")
    (run / "checkpoints" / "rank0.pt").write_bytes(b"x")
    (run / "tb" / "rank0" / "events.out.tfevents.1").write_bytes(b"x")
    return run
