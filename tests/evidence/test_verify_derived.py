"""verify recomputes everything derived and cross-checks the records:
each attack below is made on a complete run set (the pipeline with the stand-in trainer),
the manifest is then rebuilt so that the hashes agree, and verify must still name it."""

import json
import os
import shutil
import sys
import threading
from pathlib import Path

import pytest

from sacscale.evidence import manifest
from sacscale.evidence.verify import verify

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "workflow"))
from pipeline_helpers import complete_stand_in_set  # noqa: E402

pytestmark = pytest.mark.slow
SET = "cpu"


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A complete CPU run set made by the workflow with the stand-in trainer (the session's
    one, shared with the workflow and fault tests; `work` copies what it changes)."""
    return complete_stand_in_set(tmp_path_factory)


@pytest.fixture
def work(made, tmp_path):
    dest = tmp_path / "w"
    for sub in ("results", "reports"):
        shutil.copytree(made / sub / SET, dest / sub / SET)
    return dest / "results" / SET


def reverify(root):
    manifest.write(root)  # the attacker rebuilds the manifest: only recomputation can tell
    return verify(root)


def edit_json(path, change):
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def within(seconds, call):
    """call() in a daemon thread: its value, its exception raised here, or a failure naming
    the hang once `seconds` pass (the thread is left blocked; the test run goes on)."""
    outcome: dict = {}

    def run():
        try:
            outcome["value"] = call()
        except BaseException as exc:  # re-raised in the test's thread
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"verify still running after {seconds} s: it blocked (opened the FIFO?)"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def run_names(root):
    return [r["name"] for r in json.loads((root / "plan.json").read_text())["runs"]]


def test_untouched_set_verifies_with_every_check(work):
    result = verify(work)
    assert result.ok, result.problems()
    # a current set: nothing "not recorded" but the binding fields the stand-in trainer and
    # evaluation do not write (the trainer's window, the evaluation's hashes); a set of the
    # evidence format that requires them (evidence.json) would fail on them
    stand_in = ("train_meta.json start_time/end_time", "protocol.model_sha256", "protocol.checkpoint_model_sha256",
                "checkpoint_sha256")
    attempts = "the list of failed attempts is taken as the page gives it"  # a copy of the set without logs/
    # the policies left out by design hold their settings away from the set
    unbound = ("the settings it holds (train_config) are not compared",)
    assert all(any(f"{field}: not recorded by this older set" in n for field in stand_in) or attempts in n
               or any(u in n for u in unbound) for n in result.notes), result.notes
    assert "both pages compared line by line with the page composed again from the evidence" in result.report_check
    assert "summary.json" in result.checked and f"reports/{SET}/report.md" in result.checked
    assert result.runs_checked == 4


def test_changed_mean_in_summary_json(work):
    edit_json(work / "summary.json", lambda d: d["configs"]["n1_cpu"].__setitem__("mean", 1.0))
    assert any(p.startswith("derived: summary.json: configs.n1_cpu.mean: stored 1.0")
               for p in reverify(work).problems())


def test_changed_value_in_summary_csv(work):
    lines = (work / "summary.csv").read_text().splitlines()
    head, row = lines[0].split(","), lines[1].split(",")
    col = head.index("steady_env_steps_per_s")
    row[col] = str(float(row[col]) * 1.01)
    (work / "summary.csv").write_text("\n".join([lines[0], ",".join(row), *lines[2:]]) + "\n")
    problems = reverify(work).problems()
    assert any("summary.csv: row 1" in p and "steady_env_steps_per_s" in p for p in problems), problems


@pytest.mark.parametrize("field, value", [("devices", "0,1"), ("world_size", 8), ("config", "n9")])
def test_changed_identity_fields_in_metrics(work, field, value):
    name = run_names(work)[0]
    edit_json(work / "metrics" / f"{name}.json", lambda d: d.__setitem__(field, value))
    problems = reverify(work).problems()
    assert any(p.startswith(f"metric: {name}: {field}: stored") for p in problems), problems


def test_changed_definition_or_series_in_metrics(work):
    name = run_names(work)[1]
    edit_json(work / "metrics" / f"{name}.json", lambda d: d["series"]["total_env_steps"][-1].__setitem__(2, 1e9))
    assert any("series.total_env_steps" in p for p in reverify(work).problems())


def test_a_deleted_repeat_is_named(work):
    for name in run_names(work):
        if "_r2_" in name:
            shutil.rmtree(work / "runs" / name)
            (work / "metrics" / f"{name}.json").unlink()
    problems = reverify(work).problems()
    assert any("plan.json lists 4 runs, 2 have evidence; missing: cpu_r2_n2_cpu, cpu_r2_n1_cpu" in p
               for p in problems), problems


def test_edited_ratio_in_the_report(work):
    report = work.parent.parent / "reports" / SET / "report.md"
    summary = json.loads((work / "summary.json").read_text())
    shown = f"{summary['comparisons'][0]['ratio_of_means']:.3f}x"
    text = report.read_text()
    assert shown in text
    report.write_text(text.replace(shown, "9.999x"))
    problems = verify(work).problems()
    assert any(p.startswith(f"derived: reports/{SET}/report.md:") and "does not match" in p for p in problems), problems


def test_abbreviated_override_in_a_recorded_command(work):
    name = run_names(work)[0]

    def sneak(d):
        i = d["command"].index("--seed")
        d["command"][i:i + 2] = ["--seed", "1", "--see", "99"]
    edit_json(work / "runs" / name / "run.json", sneak)
    problems = reverify(work).problems()
    assert any(f"runs/{name}/run.json: command does not parse with the trainer's parser" in p for p in problems)


@pytest.mark.parametrize("where, change, message", [
    ("train_meta.json", lambda d: d["config"].__setitem__("seed", 99),
     "seed: plan.json says 1, train_meta.json says 99"),
    ("train_meta.json", lambda d: d["config"].__setitem__("iterations", 12),
     "iterations: plan.json says 24, train_meta.json says 12"),
    ("train_meta.json", lambda d: d.__setitem__("world_size", 3),
     "world size: plan.json says 1, train_meta.json says 3"),
    ("run.json", lambda d: d["resolved_config"].__setitem__("cpu_pools", "0"), "CPU pools: plan.json says 'auto'"),
    ("run.json", lambda d: d["code"].__setitem__("commit", "0" * 40), "code commit: environment.json says"),
    ("train_meta.json", lambda d: d["config"].__setitem__("model", "other.mjb"), "model file: run.json command says"),
])
def test_records_that_disagree_with_the_plan(work, where, change, message):
    name = run_names(work)[0]
    edit_json(work / "runs" / name / where, change)
    problems = reverify(work).problems()
    assert any(p.startswith(f"record: {name}: ") and message in p for p in problems), problems


def test_an_unhashed_model(work):
    (work / "model" / "g1_walk_flat.mjb").write_bytes(b"another model")
    edit_json(work / "model.json", lambda d: d.__setitem__("sha256", "a" * 64))
    problems = reverify(work).problems()
    assert any(p.startswith("record: model: model.json sha256 aaaaaaaaaaaa") for p in problems), problems


@pytest.mark.parametrize("rel, value, message", [
    ("metrics/{run}.json", [1, 2], "structure: metrics/{run}.json: not a JSON dict (a list)"),
    ("metrics/{run}.json", "{not json", "structure: metrics/{run}.json: not valid JSON"),
    ("plan.json", {"runs": "all of them"}, "structure: plan.json: field runs is a str"),
    ("runs/{run}/run.json", {"resolved_config": []}, "structure: runs/{run}/run.json: field resolved_config is a list"),
    ("summary.json", {"configs": 3}, "derived: summary.json: configs: stored 3, recomputed"),
])
def test_structurally_bad_json_is_named(work, rel, value, message):
    run = run_names(work)[0]
    path = work / rel.format(run=run)
    path.write_text(value if isinstance(value, str) else json.dumps(value))
    problems = reverify(work).problems()
    assert any(p.startswith(message.format(run=run)) for p in problems), problems


def test_links_and_special_files_are_refused_without_opening(work, tmp_path):
    name = run_names(work)[1]  # the 2-rank run
    rank1 = work / "runs" / name / "tb" / "rank1"
    elsewhere = tmp_path / "elsewhere"
    shutil.move(rank1, elsewhere)
    rank1.symlink_to(elsewhere, target_is_directory=True)
    os.mkfifo(work / "runs" / name / "train.log.fifo")
    (work / "runs" / name / "link.txt").symlink_to(work / "plan.json")
    report_fig = work.parent.parent / "reports" / SET / "figures" / "extra.png"
    report_fig.symlink_to(elsewhere)
    # in a thread of its own, waited for with a limit: a hang on the FIFO fails the test, not
    # stalls it (a child process would import verify's libraries again, seconds on 2 cores)
    problems = within(60, lambda: verify(work).problems())
    assert f"refused: runs/{name}/tb/rank1 (symbolic link)" in problems
    assert f"refused: runs/{name}/train.log.fifo (FIFO)" in problems
    assert f"refused: runs/{name}/link.txt (symbolic link)" in problems
    assert f"refused: ../../reports/{SET}/figures/extra.png (symbolic link)" in problems
    with pytest.raises(manifest.ManifestError, match="FIFO"):
        manifest.write(work)  # the manifest refuses them too, before hashing anything


def test_cli_prints_named_problems_not_a_traceback(work, sacscale_main):
    (work / "summary.json").write_text("[]")
    manifest.write(work)
    proc = sacscale_main("verify", work)
    assert proc.returncode == 1
    assert "structure: summary.json: not a JSON dict (a list)" in proc.stderr
    assert "Traceback" not in proc.stderr
