"""A run's rank folders are named as the trainer names them: `rank{r}`, ASCII digits, no
leading zero. `rank01`, `rank0000` or `rank\u0661` were read as ranks 1, 0 and 1, so a
second folder of one index shadowed the trainer's (the last listed read, the other not)."""

import shutil

import pytest
from synthetic_runs import write_run

from sacscale.analysis.events import RankFolderNameError, rank_dirs

TOTAL = [(step, 100.0 + step, 10.0 * step) for step in range(1, 7)]
NAMING = "not a rank folder the trainer writes (it names them rank0, rank1, ...: ASCII digits, no leading zero)"


@pytest.fixture
def run_dir(tmp_path):
    return write_run(tmp_path / "repro_r1_n2_pool32", TOTAL, ranks=2)


@pytest.mark.parametrize("name", ["rank01", "rank0000", "rank\u0661", "rank\u0966", "rank1\n", "rank_old"])
def test_another_spelling_of_a_rank_folder_is_refused(run_dir, name):
    shutil.copytree(run_dir / "tb" / "rank1", run_dir / "tb" / name)
    with pytest.raises(RankFolderNameError) as caught:
        rank_dirs(run_dir)
    assert str(caught.value).endswith(f"/tb/{name}': {NAMING}".replace("\n", "\\n")), caught.value


def test_the_trainers_names_are_read(run_dir):
    assert rank_dirs(run_dir) == {0: run_dir / "tb" / "rank0", 1: run_dir / "tb" / "rank1"}


def test_analyze_run_refuses_a_rank_0_alias_in_one_line(run_dir, tmp_path, sacscale_main):
    shutil.copytree(run_dir / "tb" / "rank0", run_dir / "tb" / "rank0000")
    out = tmp_path / "metrics.json"
    proc = sacscale_main("analyze-run", str(run_dir), "--output", str(out))
    assert proc.returncode == 2
    assert proc.stderr == f"sacscale analyze-run: error: '{run_dir}/tb/rank0000': {NAMING}\n", proc.stderr
    assert not out.exists()
