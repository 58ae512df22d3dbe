"""Each folder has a lock of its own (sacscale.locks.lock_file_beside). The lock name
dropped a leading dot, so folders `dot` and `.dot` shared `.dot.lock`: a report into
`.dot` was refused while one into `dot` ran, with a line naming the wrong folder's report."""

import sys
from pathlib import Path

from cli_runs import sacscale
from sacscale.locks import lock_beside, lock_file_beside

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "evidence"))
from set_copies import copy_committed_set  # noqa: E402

SET = "h200x1_shared_short"


def test_a_folder_and_its_dotted_namesake_have_a_lock_each(tmp_path):
    plain, dotted = tmp_path / "dot", tmp_path / ".dot"
    assert lock_file_beside(plain) != lock_file_beside(dotted)
    assert lock_file_beside(dotted) == tmp_path / "..dot.lock"
    with lock_beside(plain), lock_beside(dotted):  # two folders: both held at once
        assert sorted(p.name for p in tmp_path.iterdir()) == ["..dot.lock", ".dot.lock"]
    assert list(tmp_path.iterdir()) == []


def test_a_report_into_the_dotted_folder_runs_while_the_other_is_written(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    out = tmp_path / "out"
    with lock_beside(out / "dot"):  # a report being written into `dot`
        done = sacscale("report", "--run-set", root, "--output-dir", out / ".dot")
    assert done.returncode == 0, done.stderr
    assert (out / ".dot" / "report.md").read_text().startswith(f"# sacscale run set {SET}")
