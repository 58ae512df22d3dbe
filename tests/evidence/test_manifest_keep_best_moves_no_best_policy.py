"""`manifest --scope --keep-best` with evaluations other than the set's own (one run's) kept
the policy of the run they chose and moved the set's best run's policy out, exit 0; verify
named it only afterwards. Now it is refused before anything moves, naming the policy, why
it is the best, and the run the evaluations given chose; --keep-policies likewise."""

from cli_runs import one_line, sacscale
from set_copies import copy_committed_set

SET = "h200x1_shared_short"
BEST = "shared_r1_n1_pool7"  # the best of the set's evaluations, the one run whose policy it holds
OTHER = "shared_r1_n2_shared"
POLICY = f"runs/{BEST}/checkpoints/final.pt"


def test_keep_best_choosing_another_run_is_refused(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    moved = tmp_path / "moved"
    done = sacscale("manifest", root, "--scope", "--keep-best", root / "eval" / f"{OTHER}.json",
                    "--left-out-dir", moved)
    one_line(done, f"sacscale manifest: error: --keep-best: {POLICY} would move out of the set, but {BEST} is the "
                   "best of the set's evaluations (sacscale.eval.best), while the evaluations given chose "
                   f"{OTHER}: give the set's own evaluations (eval/*.json); nothing was moved")
    assert (root / POLICY).is_file() and not moved.exists()


def test_keep_policies_leaving_out_the_best_is_refused(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    done = sacscale("manifest", root, "--scope", "--keep-policies", OTHER, "--left-out-dir", tmp_path / "moved")
    one_line(done, f"--keep-policies: {POLICY} would move out of the set, but {BEST} is the best of the set's "
                   "evaluations (sacscale.eval.best), whose policy the set keeps: name it too (or give --keep-best); "
                   "nothing was moved")
    assert (root / POLICY).is_file()


def test_the_sets_own_evaluations_keep_the_best(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    done = sacscale("manifest", root, "--scope", "--keep-best", *sorted((root / "eval").glob("*.json")),
                    "--left-out-dir", tmp_path / "moved")
    assert done.returncode == 0, done.stderr
    assert (root / POLICY).is_file()
