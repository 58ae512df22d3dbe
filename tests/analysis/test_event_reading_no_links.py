"""A run's events are read from the folders listed, never through a link swapped in for the
run's folder after the set was checked: root's report of another user's set listed, and
read, root's own folder through that user's link (a race past the set's checks)."""

import pytest

from sacscale.analysis import events, metrics
from sacscale.analysis.events import EventFileError
from synthetic_runs import linear_points, write_run


def swapped_after_listing(monkeypatch, module, run_dir, elsewhere):
    """`module.rank_dirs` lists the run's folder, which is then swapped for a link to `elsewhere`."""
    listed = module.rank_dirs

    def swap(*args, **kwargs):
        found = listed(*args, **kwargs)
        run_dir.rename(run_dir.with_name("moved"))
        run_dir.symlink_to(elsewhere)
        return found

    monkeypatch.setattr(module, "rank_dirs", swap)


@pytest.mark.parametrize("module, read", [(events, events.read_run),
                                          (metrics, lambda run_dir: metrics.run_events(run_dir)[1])])
def test_a_run_folder_swapped_for_a_link_is_not_read_through_it(tmp_path, monkeypatch, module, read):
    run_dir = write_run(tmp_path / "runs" / "r1", linear_points(10, 1.0, 1.0))
    elsewhere = write_run(tmp_path / "private" / "run", linear_points(10, 7.0, 1.0))
    swapped_after_listing(monkeypatch, module, run_dir, elsewhere)
    with pytest.raises(EventFileError, match=r"runs/r1/tb/rank0.*'r1' is a symbolic link; a record is not read"):
        read(run_dir)


def test_a_rank_folder_that_is_a_link_is_named(tmp_path):
    run_dir = write_run(tmp_path / "r1", linear_points(10, 1.0, 1.0))
    elsewhere = write_run(tmp_path / "other", linear_points(10, 7.0, 1.0))
    (run_dir / "tb" / "rank0").rename(tmp_path / "moved")
    (run_dir / "tb" / "rank0").symlink_to(elsewhere / "tb" / "rank0")
    with pytest.raises(EventFileError, match=r"tb/rank0: its folder 'rank0' is a symbolic link"):
        events.read_run(run_dir)


def test_a_run_named_through_our_own_link_is_read_where_it_leads(tmp_path):
    run_dir = write_run(tmp_path / "r1", linear_points(10, 1.0, 1.0))
    (tmp_path / "link").symlink_to(run_dir)
    assert [s.value for s in events.read_run(tmp_path / "link")[0]["Perf/total_env_steps"]][-1] == 10.0
