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


def leave_out_r2(work, dest):
    """R2's policy out; R1's, the set's best-evaluated run, is one the set keeps (manifest refuses to move it)."""
    return sacscale("manifest", work, "--scope", "--keep-policies", R1, "--left-out-dir", dest)


def test_another_sets_policy_in_the_folder_is_refused_and_nothing_moves(work, tmp_path):
    dest = tmp_path / "lo"
    (dest / R2).mkdir(parents=True)
    (dest / R2 / "final.pt").write_bytes(b"OTHER-SETS-POLICY")
    before = {run: policy(work, run).read_bytes() for run in (R1, R2)}
    one_line(leave_out_r2(work, dest),
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
    one_line(leave_out_r2(work, dest), f"{dest}/{R2}/final.pt: already there, and not this set's policy of {R2}")
    assert policy(work, R2).is_file() and (dest / R2 / "final.pt").is_symlink()


def test_the_same_policy_already_there_is_replaced_by_itself(work, tmp_path):
    """A copy that an earlier, interrupted move left (the same bytes): nothing is lost."""
    dest = tmp_path / "lo"
    (dest / R2).mkdir(parents=True)
    shutil.copy2(policy(work, R2), dest / R2 / "final.pt")
    done = leave_out_r2(work, dest)
    assert done.returncode == 0, done.stderr
    assert policy(work, R1).is_file() and not policy(work, R2).exists()
    assert not (dest / R1).exists() and (dest / R2 / "final.pt").is_file()


def test_another_sets_policy_arriving_after_the_check_is_not_replaced(work, tmp_path, monkeypatch):
    """Two manifests into one folder at once: the other set's policy lands between the check
    and the move. Before: `shutil.move` replaced it (exit 0, the other set's policy gone while
    its evidence.json records it there). Now the move makes its name exclusively: refused as
    the check refuses, nothing moved, the other set's file kept."""
    from sacscale.evidence import scope

    dest = tmp_path / "lo"
    checked = scope._refuse_taken

    def the_other_manifest_comes_between(target, run, replaceable):
        checked(target, run, replaceable)
        if run == R2 and not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(b"OTHER-SETS-POLICY")

    monkeypatch.setattr(scope, "_refuse_taken", the_other_manifest_comes_between)
    before = {run: policy(work, run).read_bytes() for run in (R1, R2)}
    with pytest.raises(scope.LeftOutTaken) as refused:
        scope.leave_out_policies(work, set(), dest)
    assert str(refused.value) == (
        f"{dest}/{R2}/final.pt: already there, and not this set's policy of {R2} (another set's left-out policy, in "
        "a folder two sets share?); nothing was moved: give each set a --left-out-dir of its own (the pipeline's is "
        "logs/<set>/left_out)")
    assert (dest / R2 / "final.pt").read_bytes() == b"OTHER-SETS-POLICY"
    assert {run: policy(work, run).read_bytes() for run in (R1, R2)} == before
    assert not (dest / R1 / "final.pt").exists()


def test_across_file_systems_the_copy_is_made_exclusively(work, tmp_path, monkeypatch):
    """Where a hard link cannot be made (logs/ on another disk) the policy is copied into a
    file made new; the set loses it only once it is there."""
    from sacscale.evidence import scope

    def no_hard_links(src, dst):
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(scope.os, "link", no_hard_links)
    dest = tmp_path / "lo"
    before = {run: policy(work, run).read_bytes() for run in (R1, R2)}
    entries = scope.leave_out_policies(work, set(), dest)
    assert [e["path"] for e in entries] == [f"runs/{R1}/checkpoints/final.pt", f"runs/{R2}/checkpoints/final.pt"]
    assert {run: (dest / run / "final.pt").read_bytes() for run in (R1, R2)} == before
    assert not policy(work, R1).exists() and not policy(work, R2).exists()
