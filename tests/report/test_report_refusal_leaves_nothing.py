"""`sacscale report --run-set S --output-dir OUT` refused for a record it cannot read
leaves nothing in OUT: the best run's video was copied there before the records were
read, so a cut evaluation left OUT/figures/best_run.webp and best_run.json behind."""

import sys
from pathlib import Path

from cli_runs import one_line, sacscale

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "evidence"))
from set_copies import copy_committed_set  # noqa: E402

SET = "h200x1_shared_short"  # a committed set with the best run's video


def cut_evaluation(tmp_path: Path) -> Path:
    root = copy_committed_set(tmp_path, SET)
    (root / "eval" / "shared_r2_n1_pool7.json").write_text('{"bad": ')
    return root


def test_a_refused_report_into_a_new_folder_leaves_no_folder(tmp_path):
    root = cut_evaluation(tmp_path)
    out = tmp_path / "new" / "out"
    one_line(sacscale("report", "--run-set", root, "--output-dir", out), "shared_r2_n1_pool7.json")
    assert not (tmp_path / "new").exists()


def test_a_refused_report_into_a_folder_of_ours_leaves_only_what_was_there(tmp_path):
    root = cut_evaluation(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    one_line(sacscale("report", "--run-set", root, "--output-dir", out), "shared_r2_n1_pool7.json")
    assert [p.name for p in out.rglob("*")] == ["notes.txt"]
