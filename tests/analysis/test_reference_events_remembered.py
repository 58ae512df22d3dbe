"""A reference run's events in our tags are renamed once for the same event files: verify reads a
run more than once, and renaming its thousands of points cost more than reading them. Each read
gives the caller its own lists, and changed files are renamed afresh."""

from torch.utils.tensorboard import SummaryWriter

from sacscale.analysis import reference
from sacscale.analysis.events import Scalar
from sacscale.analysis.reference import read_events


def _write(log_root, points: int, value: float = 0.5) -> None:
    w = SummaryWriter(str(log_root / "G1WalkFlat" / "2026-12-01_10-00-00_mujoco"))
    for it in range(1, points + 1):
        w.add_scalar("Perf/total_fps", 20480.0, it * 2048, walltime=100.0 + it)
        w.add_scalar("Train/mean_reward", float(it), it * 2048, walltime=100.0 + it)
        w.add_scalar("reward/tracking_lin_vel", value, it * 2048, walltime=100.0 + it)
    w.close()


def _counted(monkeypatch) -> list:
    """The Scalars the reader makes in our tags, one entry each."""
    made = []
    monkeypatch.setattr(reference, "Scalar", lambda *args: made.append(1) or Scalar(*args))
    return made


def test_the_same_files_are_renamed_once_into_the_callers_own_lists(tmp_path, monkeypatch):
    renamings = _counted(monkeypatch)
    _write(tmp_path / "a", 30)
    first = read_events(tmp_path / "a")
    first["Episode/return"].clear()  # the caller's own: the next read is whole
    made = len(renamings)
    second = read_events(tmp_path / "a")
    assert made == 30 * 5 and len(renamings) == made  # the clock, 3 tags under Ref/, the reward term x dt
    assert [s.value for s in second["Episode/return"]] == [float(i) for i in range(1, 31)]
    assert second["Episode/return"] is second["Ref/Train/mean_reward"]  # one list under both names
    assert second["Reward/tracking_lin_vel"][0].value == 0.5 * 0.02
    assert first["Ref/Train/mean_reward"] is first["Episode/return"] and not first["Ref/Train/mean_reward"]


def test_changed_files_are_renamed_afresh(tmp_path, monkeypatch):
    renamings = _counted(monkeypatch)
    _write(tmp_path / "a", 20)
    before = read_events(tmp_path / "a")
    made = len(renamings)
    for path in (tmp_path / "a" / "G1WalkFlat").rglob("events.out.tfevents.*"):
        path.unlink()
    _write(tmp_path / "a", 20, value=0.25)
    after = read_events(tmp_path / "a")
    assert len(renamings) == 2 * made
    assert before["Reward/tracking_lin_vel"][0].value == 0.5 * 0.02
    assert after["Reward/tracking_lin_vel"][0].value == 0.25 * 0.02
