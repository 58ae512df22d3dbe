"""`manifest --scope --left-out-dir D` never replaces a file already in D. Sets' runs share
names (every CPU set has cpu_r1_n2_cpu): with one D for two sets, the second set's policy
replaced the first's, whose hash the first set's evidence.json records, without a word
(exit 0). Now every destination is judged before any policy moves: one line, exit 2."""

import shutil
from pathlib import Path

import pytest

from cli_runs import one_line, sacscale

REPO = Path(__file__).resolve().parents[2]
SET = "h200x1_learning_lowent"
R1, R2 = "learn_r1_n1_obsnorm_lowent", "learn_r2_n1_obsnorm_lowent"


@pytest.fixture
def work(tmp_path):
    shutil.copytree(REPO / "results" / SET, tmp_path / "results" / SET)
    return tmp_path / "results" / SET


def policy(work, run):
    return work / "runs" / run / "checkpoints" / "final.pt"


def leave_out_both(work, dest):
    """Every policy out (no run kept): R1's would move first."""
    return sacscale("manifest", work, "--scope", "--keep-policies", "--left-out-dir", dest)


def test_another_sets_policy_in_the_folder_is_refused_and_nothing_moves(work, tmp_path):
    dest = tmp_path / "lo"
    (dest / R2).mkdir(parents=True)
    (dest / R2 / "final.pt").write_bytes(b"OTHER-SETS-POLICY")
    before = {run: policy(work, run).read_bytes() for run in (R1, R2)}
    one_line(leave_out_both(work, dest),
             f"sacscale manifest: error: --left-out-dir {dest}: {dest}/{R2}/final.pt: already there, and not this "
             f"set's policy of {R2} (another set's left-out policy, in a folder two sets share?); nothing was moved: "
             "give each set a --left-out-dir of its own (the pipeline's is logs/<set>/left_out)")
    assert (dest / R2 / "final.pt").read_bytes() == b"OTHER-SETS-POLICY"
    assert {run: policy(work, run).read_bytes() for run in (R1, R2)} == before
    assert sorted(p.name for p in dest.iterdir()) == [R2] and not (work / "evidence.json").exists()


def test_a_link_at_the_policys_name_is_refused(work, tmp_path):
    dest = tmp_path / "lo"
    (dest / R2).mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere.pt"
    elsewhere.write_bytes(policy(work, R2).read_bytes())  # the same bytes, but where a link leads
    (dest / R2 / "final.pt").symlink_to(elsewhere)
    one_line(leave_out_both(work, dest), f"{dest}/{R2}/final.pt: already there, and not this set's policy of {R2}")
    assert policy(work, R2).is_file() and (dest / R2 / "final.pt").is_symlink()


def test_the_same_policy_already_there_is_replaced_by_itself(work, tmp_path):
    """A copy that an earlier, interrupted move left (the same bytes): nothing is lost."""
    dest = tmp_path / "lo"
    (dest / R2).mkdir(parents=True)
    shutil.copy2(policy(work, R2), dest / R2 / "final.pt")
    done = leave_out_both(work, dest)
    assert done.returncode == 0, done.stderr
    assert not policy(work, R1).exists() and not policy(work, R2).exists()
    assert (dest / R1 / "final.pt").is_file() and (dest / R2 / "final.pt").is_file()
