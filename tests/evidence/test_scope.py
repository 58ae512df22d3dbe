"""What a set's evidence covers and its size: sets made from now on (evidence.json, the
current evidence format) fit in 4 MB, leave out only policies no claim rests on (their
hashes recorded, so evaluations stay bound to them), and verify says what is hashed and
what is left out by design."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sacscale.evidence import manifest, scope
from sacscale.evidence.verify import verify

REPO = Path(__file__).resolve().parents[2]
# Sets committed before the budget: they stay as they are. A set not named here was made
# from now on, and must carry evidence.json and fit the budget. Never add to this list.
PRE_BUDGET = frozenset({
    "h200_conforming", "h200_halves_bench", "h200_learning", "h200_learning_norm", "h200_ref_pair_partial",
    "h200_two_trainers", "h200x1", "h200x1_final", "h200x1_final5", "h200x1_learning_lowent",
    "h200x1_learning_obsnorm", "h200x1_ref", "h200x1_ref_learning", "h200x2", "h200x2_bench",
    "noise_sweep_obsnorm",
})
SET = "h200x1_learning_lowent"
R1, R2 = "learn_r1_n1_obsnorm_lowent", "learn_r2_n1_obsnorm_lowent"


def committed_sets():
    return sorted(p.name for p in (REPO / "results").iterdir() if p.is_dir())


@pytest.mark.parametrize("run_set", [s for s in committed_sets() if s not in PRE_BUDGET] or ["(none yet)"])
def test_every_set_made_from_now_on_fits_the_budget(run_set):
    if run_set == "(none yet)":
        pytest.skip("no set made since the budget is committed yet")
    root = REPO / "results" / run_set
    assert scope.format_of(root) >= scope.FORMAT, f"results/{run_set}: no evidence.json of the current format"
    size = scope.set_bytes(root)
    assert size <= scope.BUDGET_BYTES, f"results/{run_set} and reports/{run_set}: {size:,} bytes"
    result = verify(root)
    assert result.ok, result.problems()


def test_sets_before_the_budget_are_said_to_be_so():
    result = verify(REPO / "results" / "h200x1", recompute=False)
    assert any(line.startswith("size: ") and "a set made before the 4 MB budget, kept as committed" in line
               for line in result.covered), result.covered


@pytest.fixture
def work(tmp_path):
    for sub in ("results", "reports"):
        shutil.copytree(REPO / sub / SET, tmp_path / sub / SET)
    return tmp_path / "results" / SET


def make_current(work, tmp_path, keep=(R1,)):
    # what the older set keeps beside its evidence, which no stage writes: a set of the
    # current format holds only what its stages write (sacscale.evidence.set_files)
    removed = 1 + sum(1 for p in (work / "pipeline").rglob("*") if p.is_file())
    (work / "README.md").unlink()
    shutil.rmtree(work / "pipeline")
    record = json.loads((work / "verify.json").read_text())
    record["files_checked"] -= removed
    (work / "verify.json").write_text(json.dumps(record, indent=1))
    proc = subprocess.run([sys.executable, "-m", "sacscale.cli", "manifest", str(work), "--scope",
                           "--keep-policies", *keep, "--left-out-dir", str(tmp_path / "left_out")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc


def shrink_report(work):
    """The committed report's GIF alone is 2 MB: a small stand-in of the same frames, size
    and rate (what verify reads of it), so the set fits the budget."""
    from PIL import Image

    figures = work.parent.parent / "reports" / SET / "figures"
    for gif in figures.glob("*.gif"):
        frames = [Image.new("L", (320, 240), color=2 * i) for i in range(120)]  # unlike frames: none merged
        frames[0].save(gif, save_all=True, append_images=frames[1:], duration=100, loop=0)
    # the page without its embedded GIF: the same tables (verify reads them), the images dropped
    page = work.parent.parent / "reports" / SET / "report.html"
    page.write_text(re.sub(r"<img [^>]*>", "", page.read_text()))


def test_a_throughput_runs_policy_is_left_out_with_its_hash(work, tmp_path):
    shrink_report(work)
    proc = make_current(work, tmp_path)
    assert f"left out by design: runs/{R2}/checkpoints/final.pt" in proc.stdout
    assert not (work / "runs" / R2 / "checkpoints" / "final.pt").exists()
    assert (tmp_path / "left_out" / R2 / "final.pt").is_file()
    assert (work / "runs" / R1 / "checkpoints" / "final.pt").is_file()  # a claim rests on it
    result = verify(work)
    assert result.ok, result.problems()
    assert any(line.startswith(f"left out by design: runs/{R2}/checkpoints/final.pt (sha256")
               for line in result.covered)
    assert scope.set_bytes(work) <= scope.BUDGET_BYTES


def test_keep_best_keeps_the_policy_the_reports_video_shows(work, tmp_path, sacscale_main):
    """The pipeline's default: the best-evaluated run's policy (sacscale.eval.best, as
    render-best chooses) stays; every other run's moves out."""
    evals = [str(work / "eval" / f"{r}.json") for r in (R1, R2)]  # R1 scores 0.977, R2 0.975
    cmd = ["manifest", str(work)]
    refused = sacscale_main(*cmd, "--keep-best", *evals)
    assert refused.returncode == 2 and "need --scope" in refused.stderr
    proc = sacscale_main(*cmd, "--scope", "--keep-best", *evals, "--left-out-dir", tmp_path / "left_out")
    assert proc.returncode == 0, proc.stderr
    assert f"left out by design: runs/{R2}/checkpoints/final.pt" in proc.stdout
    assert (work / "runs" / R1 / "checkpoints" / "final.pt").is_file() and (tmp_path / "left_out" / R2).is_dir()


def test_an_evaluation_stays_bound_to_a_policy_left_out(work, tmp_path):
    shrink_report(work)
    make_current(work, tmp_path)
    path = work / "eval" / f"{R2}.json"
    data = json.loads(path.read_text())
    data["checkpoint_sha256"] = "c" * 64
    path.write_text(json.dumps(data))
    manifest.write(work)
    problems = verify(work).problems()
    assert any(p.startswith(f"record: eval/{R2}.json: evaluated a policy hashing cccccccccccc") and "left out" in p
               for p in problems), problems


def test_a_policy_listed_as_left_out_but_present_fails(work, tmp_path):
    shrink_report(work)
    make_current(work, tmp_path)
    shutil.copy2(tmp_path / "left_out" / R2 / "final.pt", work / "runs" / R2 / "checkpoints" / "final.pt")
    manifest.write(work)
    problems = verify(work).problems()
    assert f"scope: evidence.json: runs/{R2}/checkpoints/final.pt is listed as left out, but it is in the set" \
        in problems, problems


def test_only_policies_may_be_left_out(work, tmp_path):
    shrink_report(work)
    make_current(work, tmp_path)
    data = json.loads((work / "evidence.json").read_text())
    data["left_out"].append({"path": f"runs/{R1}/train_meta.json", "sha256": "d" * 64, "why": "too big"})
    (work / "evidence.json").write_text(json.dumps(data))
    (work / "runs" / R1 / "train_meta.json").unlink()
    manifest.write(work)
    problems = verify(work).problems()
    assert any(p.startswith(f"scope: evidence.json: runs/{R1}/train_meta.json is listed as left out; only")
               for p in problems), problems


def test_a_set_of_the_current_format_over_the_budget_fails(work, tmp_path):
    make_current(work, tmp_path)  # the committed report's 2 MB GIF and 2 MB HTML stay
    problems = verify(work).problems()
    assert any(p.startswith("scope: size: ") and "over the budget of 4,194,304" in p for p in problems), problems


def test_the_cli_says_what_is_hashed_and_what_is_left_out(work, tmp_path, sacscale_main):
    shrink_report(work)
    make_current(work, tmp_path)
    proc = sacscale_main("verify", work)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "hashed: " in out and " files, " in out
    for name in ("MANIFEST.sha256", "manifest.json", "verify.json", f"reports/{SET}/",
                 f"runs/{R2}/checkpoints/final.pt"):
        assert f"left out by design: {name}" in out, (name, out)
    assert "(budget 4,194,304; format 2)" in out


def test_a_misspelt_run_to_keep_is_refused_before_any_policy_moves(work, tmp_path, sacscale_main):
    """`--keep-policies R1x` moved every policy out, the one meant to stay too, exit 0; an
    unreadable --keep-best evaluation and a left-out folder inside the set were exit 1
    (`BadInput: ...`). Each is a bad option now: one line, exit 2."""
    cmd = ["manifest", str(work), "--scope", "--left-out-dir", tmp_path / "left_out"]
    proc = sacscale_main(*cmd, "--keep-policies", f"{R1}x")
    assert proc.returncode == 2 and f"--keep-policies {R1}x: no run of that name under" in proc.stderr, proc.stderr
    proc = sacscale_main(*cmd, "--keep-best", tmp_path / "missing.json")
    assert proc.returncode == 2 and "--keep-best: evaluation" in proc.stderr and "BadInput" not in proc.stderr
    proc = sacscale_main("manifest", str(work), "--scope", "--keep-policies", "--left-out-dir", work / "runs")
    # the set is finished (its manifest made): the rule for every command's output refuses it first
    assert proc.returncode == 2 and f"is inside results/{SET}, a finished run set" in proc.stderr, proc.stderr
    assert (work / "runs" / R1 / "checkpoints" / "final.pt").is_file()
    assert (work / "runs" / R2 / "checkpoints" / "final.pt").is_file() and not (tmp_path / "left_out").exists()


@pytest.mark.parametrize(("given", "says"), [(["--keep-best"], "--keep-best needs --left-out-dir"),
                                             (["--keep-policies", R1], "--keep-policies needs --left-out-dir"),
                                             (["--keep-policies", R1, "--keep-best"],
                                              "--keep-policies and --keep-best need --left-out-dir")])
def test_a_policy_to_keep_without_a_left_out_folder_names_the_option_given(work, sacscale_main, given, says):
    """`--keep-best` alone was answered `--keep-policies needs --left-out-dir`, exit 1."""
    evals = [str(work / "eval" / f"{r}.json") for r in (R1, R2)]
    args = [a for option in given for a in ([option, *evals] if option == "--keep-best" else [option])]
    proc = sacscale_main("manifest", str(work), "--scope", *args)
    assert proc.returncode == 2 and proc.stderr.strip() == f"sacscale manifest: error: {says} (where the other " \
        "policies go)", proc.stderr
    assert not (work / "evidence.json").exists()  # nothing written


def test_the_best_run_of_another_sets_evaluations_is_named_so(work, tmp_path, sacscale_main):
    other = REPO / "results" / "h200x1_shared_short" / "eval" / "shared_r1_n1_pool7.json"
    proc = sacscale_main("manifest", str(work), "--scope", "--keep-best", other, "--left-out-dir", tmp_path / "out")
    assert proc.returncode == 2 and "--keep-best: the best-evaluated run shared_r1_n1_pool7 is no run under " \
        f"{work}/runs (evaluations of another set?)" in proc.stderr, proc.stderr
    assert (work / "runs" / R2 / "checkpoints" / "final.pt").is_file() and not (tmp_path / "out").exists()
