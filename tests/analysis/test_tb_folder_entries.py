"""A run's `tb/` holds the rank folders the trainer writes and nothing else. A FILE named
`tb/rank2` and a hidden folder `tb/.rank2` holding another rank's events (which TensorBoard
would show as one more series) were silently left unread, and analyze-run gave the run's
figures from the other ranks alone."""

import shutil

import pytest
from synthetic_runs import write_run

from sacscale.analysis.events import RankFolderNameError, rank_dirs

TOTAL = [(step, 100.0 + step, 10.0 * step) for step in range(1, 7)]
NOT_WRITTEN = "the trainer does not write (it writes only rank folders rank0, rank1, ... in tb/)"


@pytest.fixture
def run_dir(tmp_path):
    return write_run(tmp_path / "repro_r1_n2_pool32", TOTAL, ranks=2)


def test_a_file_at_a_rank_folders_name_is_refused(run_dir, tmp_path, sacscale_main):
    (run_dir / "tb" / "rank2").write_bytes(next((run_dir / "tb" / "rank1").iterdir()).read_bytes())
    out = tmp_path / "metrics.json"
    proc = sacscale_main("analyze-run", str(run_dir), "--output", str(out))
    expected = (f"sacscale analyze-run: error: '{run_dir}/tb/rank2': a file at a rank folder's name; the trainer "
                "writes a folder of event files there\n")
    assert (proc.returncode, proc.stderr) == (2, expected)
    assert not out.exists()


def test_a_hidden_folder_of_another_ranks_events_is_refused(run_dir, tmp_path, sacscale_main):
    shutil.copytree(run_dir / "tb" / "rank1", run_dir / "tb" / ".rank2")
    out = tmp_path / "metrics.json"
    proc = sacscale_main("analyze-run", str(run_dir), "--output", str(out))
    assert (proc.returncode, proc.stderr) == (2, f"sacscale analyze-run: error: '{run_dir}/tb/.rank2': a folder "
                                                 f"{NOT_WRITTEN}\n")
    assert not out.exists()


@pytest.mark.parametrize(("name", "kind"), [("notes", "a folder"), ("notes.txt", "a file"), (".hidden", "a file")])
def test_any_other_entry_is_refused(run_dir, name, kind):
    entry = run_dir / "tb" / name
    entry.mkdir() if kind == "a folder" else entry.write_text("x")
    with pytest.raises(RankFolderNameError) as caught:
        rank_dirs(run_dir)
    assert str(caught.value) == f"'{entry}': {kind} {NOT_WRITTEN}"


def test_a_link_of_another_name_is_refused(run_dir):
    (run_dir / "tb" / "all").symlink_to(run_dir / "tb" / "rank1")
    with pytest.raises(RankFolderNameError) as caught:
        rank_dirs(run_dir)
    assert str(caught.value) == f"'{run_dir}/tb/all': a link {NOT_WRITTEN}"


def test_the_rank_folders_alone_are_read(run_dir):
    assert rank_dirs(run_dir) == {0: run_dir / "tb" / "rank0", 1: run_dir / "tb" / "rank1"}
