"""verify cannot be walked around: another spelling of the set, events or evaluations moved
between runs with everything derived regenerated, a deleted report. Each attack is made on
a copy of a committed set (real records: run windows, hosts, evaluation hashes), then the
attacker regenerates the metrics, the summary and the manifest with the project's own code."""

import importlib
import json
import os
import shutil
from pathlib import Path

import pytest

from sacscale.analysis.aggregate import runs_table
from sacscale.analysis.metrics import analyze_run
from sacscale.evidence import manifest
from sacscale.evidence.verify import recompute_summary, verify
from set_copies import copy_committed_set

REPO = Path(__file__).resolve().parents[2]
SET = "h200x1_learning_lowent"  # two repeats of one configuration, each evaluated
R1, R2 = "learn_r1_n1_obsnorm_lowent", "learn_r2_n1_obsnorm_lowent"


@pytest.fixture
def work(tmp_path):
    """results/SET and reports/SET, copied into a tree of the same layout."""
    return copy_committed_set(tmp_path, SET)


def regenerate(root: Path) -> None:
    """What an attacker reruns after moving evidence: every run's metrics, the summary and
    the manifest, with the project's own functions."""
    plan = json.loads((root / "plan.json").read_text())
    metrics = []
    for entry in plan["runs"]:
        m = analyze_run(root / "runs" / entry["name"])
        (root / "metrics" / f"{entry['name']}.json").write_text(json.dumps(m))
        metrics.append(m)
    (root / "summary.json").write_text(json.dumps(recompute_summary(plan, metrics)))
    runs_table(metrics).to_csv(root / "summary.csv", index=False)
    manifest.write(root)


def records(result) -> list[str]:
    return [p for p in result.problems() if p.startswith("record: ")]


def edit_report(root: Path) -> None:
    report = root.parent.parent / "reports" / SET / "report.md"
    summary = json.loads((root / "summary.json").read_text())
    shown = f"{summary['configs']['n1_obsnorm_lowent']['mean']:,.0f}"
    text = report.read_text()
    assert shown in text
    report.write_text(text.replace(shown, "99,999"))


def report_problems(result) -> list[str]:
    return [p for p in result.problems() if f"reports/{SET}/report.md" in p and "does not match" in p]


def test_the_untouched_copy_verifies(work):
    result = verify(work)
    assert result.ok, result.problems()
    assert result.checked == ["summary.json", f"reports/{SET}/report.md", f"reports/{SET}/report.html"]


# --- another spelling of the same set -----------------------------------------------------------------

def spellings(work: Path, tmp_path: Path) -> dict[str, tuple[str, Path]]:
    """{label: (the spelling, the working directory it is given in)}."""
    (tmp_path / "link_to_set").symlink_to(work, target_is_directory=True)
    (tmp_path / "link_to_results").symlink_to(work.parent, target_is_directory=True)
    return {
        "canonical": (str(work), tmp_path),
        "dot-dot": (str(work.parent / ".." / "results" / SET), tmp_path),
        "dot": (".", work),
        "relative": (os.path.join("results", SET), work.parent.parent),
        "trailing ..": (str(work / "runs" / ".."), tmp_path),
        "link to the set": (str(tmp_path / "link_to_set"), tmp_path),
        "link to results/": (str(tmp_path / "link_to_results" / SET), tmp_path),
    }


def verify_in(spelling: str, cwd: Path):
    here = Path.cwd()
    os.chdir(cwd)
    try:
        return verify(spelling)
    finally:
        os.chdir(here)


def test_every_spelling_checks_the_report(work, tmp_path):
    edit_report(work)
    for label, (spelling, cwd) in spellings(work, tmp_path).items():
        result = verify_in(spelling, cwd)
        assert report_problems(result), (label, result.problems())
        assert result.root == str(work.resolve()), label


def test_every_spelling_refuses_a_link_in_the_report_folder(work, tmp_path):
    figure = work.parent.parent / "reports" / SET / "figures" / "planted.png"
    figure.symlink_to("/etc/passwd")
    for label, (spelling, cwd) in spellings(work, tmp_path).items():
        result = verify_in(spelling, cwd)
        assert f"refused: ../../reports/{SET}/figures/planted.png (symbolic link)" in result.problems(), label


def test_the_cli_names_the_canonical_path(work, tmp_path, sacscale_main):
    edit_report(work)
    spelling = str(work.parent / ".." / "results" / SET)
    proc = sacscale_main("verify", spelling)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"(that is, {work.resolve()})" in proc.stderr and "does not match" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_an_edited_report_that_keeps_the_original_in_an_html_comment_fails(work):
    """The renderer shows the edited table; the comment that holds the original text is not
    read (it once made the regenerated text appear in the file)."""
    report = work.parent.parent / "reports" / SET / "report.md"
    original = report.read_text()
    edit_report(work)
    report.write_text(report.read_text() + f"\n<!--\n{original}\n-->\n")
    problems = report_problems(verify(work))
    comment = "an HTML comment (it could hide or change what is shown)"
    assert any("shows '99,999'" in p for p in problems) and any(comment in p for p in problems), problems
    assert all("shows '99,999'" in p or comment in p for p in problems), problems


def test_a_reworded_committed_report_verifies(work):
    """Sentences are not compared: a committed report with its prose reworded still verifies."""
    report = work.parent.parent / "reports" / SET / "report.md"
    text = report.read_text()
    reworded = text.replace("Claim, from the seed:", "The seed claims:").replace("What ran:", "Runs:")
    assert reworded != text
    report.write_text(reworded)
    assert verify(work).ok


# --- a missing report ------------------------------------------------------------------------------

def test_a_deleted_report_fails(work):
    (work.parent.parent / "reports" / SET / "report.md").unlink()
    result = verify(work)
    assert f"missing: reports/{SET}/report.md (the set's summary.json has a report: it was deleted, or the " \
           f"pipeline never got to write it)" in result.problems()


def test_a_deleted_report_folder_fails(work):
    shutil.rmtree(work.parent.parent / "reports" / SET)
    assert not verify(work).ok


def test_a_set_moved_away_from_its_report_fails(work, tmp_path):
    moved = tmp_path / "elsewhere" / SET
    shutil.copytree(work, moved)
    result = verify(moved)
    assert any(p.startswith("missing: the report") for p in result.problems()), result.problems()


def test_the_pipelines_own_check_runs_before_the_report(work):
    """verify_evidence runs before the report exists (the report embeds its verdict)."""
    (work.parent.parent / "reports" / SET / "report.md").unlink()
    result = verify(work, report_pending=True)
    assert result.ok, result.problems()
    assert any("not checked: the pipeline writes it after this verification" in n for n in result.notes)


# --- events that belong to another run ---------------------------------------------------------------------

def event_file(root: Path, run: str) -> Path:
    (path,) = (root / "runs" / run / "tb" / "rank0").glob("events.out.tfevents.*")
    return path


def test_events_copied_from_another_repeat_fail(work):
    mine, theirs = event_file(work, R1), event_file(work, R2)
    mine.unlink()
    shutil.copy2(theirs, mine.parent / theirs.name)
    regenerate(work)
    problems = records(verify(work))
    assert any(p.startswith(f"record: {R1}: runs/{R1}/tb/rank0/{theirs.name}: created at") and
               "outside the run's window" in p for p in problems), problems
    assert any(p.startswith(f"record: {R2}: ") and "events copied between runs" in p for p in problems), problems


def test_events_copied_under_this_runs_own_file_name_fail(work):
    """The copy takes the replaced file's name (this run's time, host and pid): its first
    record still says when, and its content is the other run's."""
    mine, theirs = event_file(work, R1), event_file(work, R2)
    shutil.copy2(theirs, mine)
    regenerate(work)
    problems = records(verify(work))
    assert any(p.startswith(f"record: {R1}: ") and "its first record is from" in p for p in problems), problems
    assert any("the same event file content is in run" in p for p in problems), problems


def test_events_from_another_host_fail(work):
    mine = event_file(work, R1)
    parts = mine.name.split(".")
    parts[4] = "otherhost"
    mine.rename(mine.with_name(".".join(parts)))
    regenerate(work)
    problems = records(verify(work))
    assert any("written on host 'otherhost', the run ran on 'vm'" in p for p in problems), problems


def test_a_run_record_moved_to_another_run_fails(work):
    """Swapping whole records (run.json and train_meta.json) with the events keeps each
    run's window, but the record names the run it came from."""
    a, b = work / "runs" / R1, work / "runs" / R2
    for name in ("run.json", "train_meta.json"):
        tmp = a / f"{name}.swap"
        shutil.move(a / name, tmp)
        shutil.move(b / name, a / name)
        shutil.move(tmp, b / name)
    regenerate(work)
    problems = records(verify(work))
    assert any(p.startswith(f"record: {R1}: run.json run is '{R2}'") for p in problems), problems


def test_a_trainer_record_of_another_run_fails(work):
    shutil.copy2(work / "runs" / R2 / "train_meta.json", work / "runs" / R1 / "train_meta.json")
    regenerate(work)
    problems = records(verify(work))
    assert any(p.startswith(f"record: {R1}: train_meta.json's window") for p in problems), problems


# --- evaluations that belong to another run ---------------------------------------------------------------

def edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_another_runs_evaluation_fails(work):
    shutil.copy2(work / "eval" / f"{R2}.json", work / "eval" / f"{R1}.json")
    manifest.write(work)
    problems = records(verify(work))
    assert any(p.startswith(f"record: eval/{R1}.json: evaluates") and "not this run's policy" in p
               for p in problems), problems


def test_another_runs_evaluation_under_this_runs_path_fails(work):
    """The path edited to this run's: the hash the evaluation recorded is still the other's."""
    other = json.loads((work / "eval" / f"{R2}.json").read_text())
    other["checkpoint"] = other["checkpoint"].replace(R2, R1)
    (work / "eval" / f"{R1}.json").write_text(json.dumps(other))
    manifest.write(work)
    problems = records(verify(work))
    assert any(p.startswith(f"record: eval/{R1}.json: evaluated a policy hashing") for p in problems), problems


def test_an_evaluation_on_another_model_fails(work):
    edit_json(work / "eval" / f"{R1}.json", lambda d: d["protocol"].__setitem__("model_sha256", "b" * 64))
    manifest.write(work)
    problems = records(verify(work))
    assert any(p.startswith(f"record: eval/{R1}.json: protocol.model_sha256 bbbbbbbbbbbb") for p in problems)


def test_an_evaluation_of_an_earlier_iteration_fails(work):
    edit_json(work / "eval" / f"{R1}.json", lambda d: d.__setitem__("iteration", 500))
    manifest.write(work)
    problems = records(verify(work))
    assert f"record: eval/{R1}.json: evaluated the policy of iteration 500, the run's last is 5000" in problems


def test_an_evaluation_of_no_run_of_the_set_fails(work):
    shutil.copy2(work / "eval" / f"{R1}.json", work / "eval" / "learn_r9_n1_obsnorm_lowent.json")
    manifest.write(work)
    problems = records(verify(work))
    assert any("learn_r9_n1_obsnorm_lowent, which is not a run of this set" in p for p in problems), problems


# --- sets whose records predate a binding field -------------------------------------------------------------

def test_an_older_sets_missing_binding_field_is_said_not_passed_silently(work):
    edit_json(work / "runs" / R1 / "run.json", lambda d: d.pop("host"))
    manifest.write(work)
    result = verify(work)
    assert result.ok, result.problems()
    assert any(n.startswith(f"{R1}: run.json host: not recorded by this older set") for n in result.notes)


def test_a_set_of_the_current_evidence_format_must_carry_every_binding_field(work):
    edit_json(work / "runs" / R1 / "run.json", lambda d: d.pop("host"))
    (work / "evidence.json").write_text(json.dumps({"format": 2, "budget_bytes": 4 * 1024 * 1024, "left_out": []}))
    manifest.write(work)
    problems = verify(work).problems()
    assert any(p.startswith(f"record: {R1}: run.json host: not recorded") for p in problems), problems


def test_a_record_whose_window_was_moved_to_fit_copied_events_fails(work):
    """The attacker also gives run 1's records run 2's windows, so that run 2's events fit
    them: the runs of a set ran one at a time, and now two windows overlap."""
    mine, theirs = event_file(work, R1), event_file(work, R2)
    mine.unlink()
    shutil.copy2(theirs, mine.parent / theirs.name)
    for name in ("run.json", "train_meta.json"):
        other = json.loads((work / "runs" / R2 / name).read_text())
        edit_json(work / "runs" / R1 / name, lambda d, o=other: d.update(start_time=o["start_time"],
                                                                          end_time=o["end_time"]))
    regenerate(work)
    problems = records(verify(work))
    assert not any("outside the run's window" in p for p in problems), problems  # the window now fits
    assert any("runs of a set run one at a time" in p for p in problems), problems


def test_a_manifest_line_outside_the_set_is_never_opened(work, tmp_path):
    """A manifest that lists `../../reports/S/report.md` (or any path out of the set) cannot
    make verify read or hash it: the line is named as no path the manifest writes, before any
    file is opened."""
    listed = (work / "MANIFEST.sha256").read_text()
    (work / "MANIFEST.sha256").write_text(listed + f"{'0' * 64}  ../../reports/{SET}/report.md\n")
    verifying = importlib.import_module("sacscale.evidence.verify")
    opened = []
    real_sha256 = verifying.sha256_file
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(verifying, "sha256_file", lambda path: opened.append(path) or real_sha256(path))
        with pytest.raises(manifest.ManifestError) as err:
            verify(work)
    line = len(listed.splitlines()) + 1
    assert str(err.value).endswith(f"MANIFEST.sha256:{line}: ../../reports/{SET}/report.md is not a path as the "
                                   "manifest writes them (relative, without empty, '.' or '..' parts)"), err.value
    assert opened == []


@pytest.mark.parametrize("what", ["a file", "a dangling link", "nothing"])
def test_a_root_that_is_no_set_is_one_line(tmp_path, what, sacscale_main):
    root = tmp_path / "root"
    if what == "a file":
        root.write_text("not a set")
    elif what == "a dangling link":
        root.symlink_to(tmp_path / "gone")
    proc = sacscale_main("verify", root)
    assert proc.returncode == 2  # bad input: no set is there to be damaged
    lines = proc.stderr.strip().splitlines()
    says = "no such folder" if what == "nothing" else f"evidence root is not a directory ({os.path.realpath(root)})"
    assert lines == [f"sacscale verify: error: {root}: {says}"], proc.stderr
