"""The commands (docs/faults.md row 27). Before:
Ctrl-C printed a traceback; `verify ""` verified the working directory; `report` wrote
through a linked report or figures folder (replacing the files where the link points) and,
with --figures-dir outside the report's folder, drew every figure there before failing
(exit 1, 'unexpected'); `aggregate` wrote its CSV over one of its input metrics files;
`compare-learning` compared one run with itself under two labels, and `--figure x.txt`
failed after the work (exit 1, 'unexpected'), its --output not written atomically."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sacscale.cli import main
from sacscale.evidence.manifest import MANIFEST_NAME as MANIFEST
from sacscale.evidence.manifest import sha256_file
from sacscale.evidence.verify import verify

REPO = Path(__file__).resolve().parents[2]
SET = "h200x1_shared_short"
RUN = REPO / "results" / SET / "runs" / "shared_r1_n1_pool7"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and "unexpected" not in err, err
    return code, err


def test_ctrl_c_is_one_line_not_a_traceback():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    for _ in range(5):  # verify of a small set takes about a second: it may end before the signal
        proc = subprocess.Popen([sys.executable, "-m", "sacscale.cli", "verify", str(REPO / "results" / SET)],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        # The signal lands once verify is at work (a file of the set open): a fixed sleep
        # landed on a loaded machine while Python was still starting, before any handler.
        _wait_until_reading(proc, REPO / "results" / SET, deadline=time.monotonic() + 120)
        proc.send_signal(signal.SIGINT)
        err = proc.communicate(timeout=60)[1]
        if proc.returncode != 0:
            break
    else:
        pytest.skip("verify finished before the signal, 5 times")
    assert proc.returncode == -signal.SIGINT and "Traceback" not in err, err  # as an unhandled Ctrl-C ends
    assert err.strip().endswith("interrupted (SIGINT)"), err


def _wait_until_reading(proc: subprocess.Popen, folder: Path, deadline: float) -> None:
    """Poll the process's open files until one lies in folder, or it ends (polled, so a
    finished process is reaped rather than watched as a zombie without files), or time runs out."""
    fds = Path(f"/proc/{proc.pid}/fd")
    while time.monotonic() < deadline and proc.poll() is None:
        targets = []
        try:
            listed = list(fds.iterdir())
        except OSError:  # ending right now: the next poll() sees it
            listed = []
        for fd in listed:
            try:
                targets.append(os.readlink(fd))
            except OSError:  # closed between listing and reading
                pass
        if any(t.startswith(str(folder) + os.sep) for t in targets):
            return
        time.sleep(0.005)


def test_verify_of_an_empty_name_is_refused(capsys):
    with pytest.raises(SystemExit) as exited:  # argparse's usage error, before the command runs
        main(["verify", ""])
    assert exited.value.code == 2 and "argument root: an empty value (an unset variable?)" in capsys.readouterr().err


@pytest.fixture
def finished_set(tmp_path):
    shutil.copytree(REPO / "results" / SET, tmp_path / "repo" / "results" / SET)
    (tmp_path / "repo" / "reports").mkdir()
    return tmp_path / "repo" / "results" / SET


@pytest.mark.parametrize("option, value", [("--no-metrics", None), ("--manifest", "{S}/../other.sha256")])
def test_a_partial_verification_does_not_replace_the_sets_verify_json(capsys, finished_set, option, value):
    """verify.json is the full check of the set's own manifest, whose verdict and counts the
    report shows and verify compares: a hash-only one written there failed the untouched set."""
    before = (finished_set / "verify.json").read_bytes()
    shutil.copy(finished_set / "MANIFEST.sha256", finished_set.parent / "other.sha256")
    extra = [option] + ([value.format(S=finished_set)] if value else [])
    code, err = run(capsys, "verify", finished_set, "--report-pending", *extra, "--output",
                    finished_set / "verify.json")
    assert code == 2 and f"a check with {option} is another kind: write it elsewhere" in err, err
    assert (finished_set / "verify.json").read_bytes() == before


def test_the_pipelines_verification_with_its_manifest_named_may_be_written_there(capsys, finished_set):
    manifest = finished_set / "runs" / ".." / "MANIFEST.sha256"
    code, err = run(capsys, "verify", finished_set, "--report-pending", "--manifest", manifest,
                    "--output", finished_set / "verify.json")
    assert code == 0, err


@pytest.mark.parametrize("linked", ["reports/S", "reports/S/figures"])
def test_report_never_writes_through_a_linked_folder(capsys, tmp_path, finished_set, linked):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "report.md").write_text("someone else's\n")
    link = tmp_path / "repo" / linked.replace("S", SET)
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(victim)
    code, err = run(capsys, "report", "--run-set", finished_set)
    assert code == 2 and "a symbolic link" in err and str(link) in err
    assert sorted(p.name for p in victim.iterdir()) == ["report.md"]
    assert (victim / "report.md").read_text() == "someone else's\n"


@pytest.mark.parametrize("command, option, target", [
    (["aggregate", "{S}/metrics/shared_r1_n1_pool7.json", "--json", "{tmp}/s.json"], "--csv", "other/summary.csv"),
    (["analyze-run", "{S}/runs/shared_r1_n1_pool7"], "--output", "other/metrics/r.json"),
    (["manifest", "{S}", "--json", "{tmp}/m.json"], "--output", "other/MANIFEST.sha256"),
    (["verify", "{S}"], "--output", "other/verify.json"),
    (["compare-learning", "a={S}/runs/shared_r1_n1_pool7", "--figure", "{tmp}/c.png"], "--output", "other/plan.json"),
    (["report", "--run-set", "{S}"], "--output-dir", "reports/other"),
])
def test_no_output_replaces_a_committed_file(tmp_path, finished_set, command, option, target):
    """Another set's summary.csv, metrics, MANIFEST.sha256, verify.json, a record or its
    report folder named as an output was replaced without a word."""
    repo = tmp_path / "repo"
    victim = repo / "results" / target if not target.startswith("reports/") else repo / target / "report.md"
    victim.parent.mkdir(parents=True, exist_ok=True)
    victim.write_text("committed\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", str(victim)], check=True)
    argv = [a.format(S=finished_set, tmp=tmp_path) for a in command]
    output = repo / target if target.startswith("reports/") else victim
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", *argv, option, str(output)], capture_output=True,
                          text=True, timeout=120, cwd=repo)
    assert done.returncode == 2 and f"argument {option}: {output} is committed (git tracks it)" in done.stderr, \
        done.stderr
    assert victim.read_text() == "committed\n" and not (victim.parent / "figures").exists()


def test_a_committed_file_outside_the_run_sets_may_be_replaced(tmp_path):
    """docs/figures/*.png drawn again by compare-learning: the developer's to replace, not evidence."""
    repo = tmp_path / "repo"
    figure = repo / "docs" / "figures" / "curves.png"
    figure.parent.mkdir(parents=True)
    figure.write_bytes(b"old")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", str(figure)], check=True)
    run_dir = sorted((REPO / "results" / SET / "runs").iterdir())[0]
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", "compare-learning", f"a={run_dir}", "--figure",
                           str(figure)], capture_output=True, text=True, timeout=120, cwd=repo)
    assert done.returncode == 0, done.stderr
    assert figure.read_bytes().startswith(b"\x89PNG")


def test_report_figures_outside_its_folder_are_refused_before_drawing(capsys, tmp_path):
    results = REPO / "results" / SET
    figures = tmp_path / "elsewhere"
    code, err = run(capsys, "report", "--summary", results / "summary.json",
                    "--metrics", *sorted((results / "metrics").glob("*.json")),
                    "--output-md", tmp_path / "rep" / "report.md", "--output-html", tmp_path / "rep" / "report.html",
                    "--figures-dir", figures)
    assert code == 2 and "not inside the report's folder" in err
    assert not figures.exists() and not (tmp_path / "rep").exists()


def test_aggregate_does_not_write_over_an_input(capsys, tmp_path):
    metrics = tmp_path / "m.json"
    shutil.copy(REPO / "results" / SET / "metrics" / "shared_r1_n1_pool7.json", metrics)
    before = metrics.read_bytes()
    code, err = run(capsys, "aggregate", metrics, "--csv", tmp_path / "sub" / ".." / "m.json",
                    "--json", tmp_path / "s.json")
    assert code == 2 and "an input" in err
    assert metrics.read_bytes() == before and not (tmp_path / "s.json").exists()


def test_compare_learning_refuses_one_run_under_two_labels(capsys, tmp_path):
    code, err = run(capsys, "compare-learning", f"a={RUN}", f"b={RUN.parent / '.' / RUN.name}",
                    "--output", tmp_path / "c.json")
    assert code == 2 and "the run of 'a' given again" in err
    assert not (tmp_path / "c.json").exists()


@pytest.mark.parametrize("command", ["compare-learning", "evaluate"])
def test_a_figure_name_that_is_not_png_is_a_usage_error(capsys, tmp_path, command):
    argv = [f"a={RUN}"] if command == "compare-learning" else [RUN, "--output", tmp_path / "e.json"]
    with pytest.raises(SystemExit) as exit_:
        main([command, *map(str, argv), "--figure", str(tmp_path / "x.txt")])
    assert exit_.value.code == 2
    assert "give a file name ending in .png" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_compare_learning_output_is_json_written_whole(capsys, tmp_path):
    out = tmp_path / "c.json"
    code, _ = run(capsys, "compare-learning", f"a={RUN}", "--output", out)
    assert code == 0 and json.loads(out.read_text())["runs"]["a"]["env_steps"] > 0
    assert [p.name for p in tmp_path.iterdir()] == ["c.json"]


CURE = "name a set's MANIFEST.sha256 (sacscale manifest writes one)"


@pytest.mark.parametrize("given, kind", [("/dev/zero", "character device"), ("/tmp", "a directory")])
def test_verify_names_a_manifest_that_is_no_file(capsys, given, kind):
    """The user's --manifest that is no manifest is bad input (exit 2), not damaged evidence."""
    code = main(["verify", str(REPO / "results" / SET), "--manifest", given])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err == f"sacscale verify: error: --manifest {given}: not a manifest file ({kind}); {CURE}", err


def test_verify_names_a_manifest_option_that_is_another_file_or_none(capsys, tmp_path):
    """A text file given as --manifest (a run's train.log) exited 1, the status of damaged
    evidence; a missing one was told to build it with snakemake."""
    log = REPO / "results" / SET / "runs" / "shared_r1_n2_shared" / "train.log"
    code = main(["verify", str(REPO / "results" / SET), "--manifest", str(log)])
    err = capsys.readouterr().err.strip()
    first = log.read_text().splitlines()[0]
    assert code == 2 and err == (f"sacscale verify: error: --manifest {log}:1: not a sha256sum line: {first!r}; "
                                 f"{CURE}"), err
    code = main(["verify", str(REPO / "results" / SET), "--manifest", str(tmp_path / "m.sha256")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err == f"sacscale verify: error: --manifest {tmp_path / 'm.sha256'}: no such file; {CURE}"


def test_verify_names_a_manifest_line_naming_a_path_too_long_to_open(capsys, tmp_path):
    """A line naming a 100,000-character path ended in the OS's `File name too long` after
    the whole joined path (one line of 100,090 characters), neither the manifest nor its line
    named; so did a long line that is no sha256sum line, in full."""
    manifest = tmp_path / "long.sha256"
    manifest.write_text(f"{'a' * 64}  {'x' * 100_000}\n")
    code = main(["verify", str(REPO / "results" / SET), "--manifest", str(manifest)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err == (f"sacscale verify: error: --manifest {manifest}:1: names {'x' * 160!r}... "
                                 "(99,840 more characters) (100,000 bytes), longer than a path can be (255 bytes a "
                                 f"part, 4095 in all): not a file of the set; {CURE}"), err
    manifest.write_text(f"{'y' * 100_000}\n")
    code = main(["verify", str(REPO / "results" / SET), "--manifest", str(manifest)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err == (f"sacscale verify: error: --manifest {manifest}:1: not a sha256sum line: "
                                 f"{'y' * 160!r}... (99,840 more characters); {CURE}"), err


def _line_past_the_bound_once_joined(root: Path) -> str:
    """A path of parts of 250 bytes, under 4,095 bytes itself, 4,096 once joined to root."""
    left, parts = 4096 - len(os.fsencode(f"{root}/")), []
    while left > 251:
        parts.append("a" * 250)
        left -= 251
    return "/".join([*parts, "b" * left])


def test_verify_names_a_manifest_line_too_long_once_joined_to_the_set(capsys, tmp_path):
    """A line under the path bounds alone but over them once joined to the set's folder
    ended in `missing:` with the whole 4 KB path, then 80 derived problems, exit 1."""
    root = (REPO / "results" / SET).resolve()
    rel = _line_past_the_bound_once_joined(root)
    manifest = tmp_path / "joined.sha256"
    manifest.write_text(f"{'a' * 64}  {rel}\n")
    code = main(["verify", str(REPO / "results" / SET), "--manifest", str(manifest)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err == (f"sacscale verify: error: --manifest {manifest}:1: names {rel[:160]!r}... "
                                 f"({len(rel) - 160:,} more characters) ({len(rel):,} bytes; 4,096 once joined to "
                                 f"the set's folder {root}), longer than a path can be (255 bytes a part, 4095 in "
                                 f"all): not a file of the set; {CURE}"), err


def test_a_missing_file_of_a_long_name_is_shown_shortened(tmp_path):
    """A path of up to 4 KB that fits once joined is a file the set lacks: named, its start."""
    root = tmp_path / "s"
    (root / "runs").mkdir(parents=True)
    (root / "plan.txt").write_text("x")
    rel = "/".join(["c" * 250] * 4)
    (root / MANIFEST).write_text(f"{sha256_file(root / 'plan.txt')}  plan.txt\n{'a' * 64}  {rel}\n")
    missing = verify(root, recompute=False).missing
    assert missing == [f"{rel[:160]}... ({len(rel) - 160:,} more characters)"], missing


def test_an_output_that_is_a_link_loop_is_no_traceback(tmp_path):
    """The check for committed outputs resolves the output's folder, never its name: a
    link loop there is the command's to replace (atomically, as any link)."""
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", "analyze-run", str(RUN), "--output", str(loop)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert not loop.is_symlink() and json.loads(loop.read_text())["run"] == RUN.name


def test_a_folder_output_that_is_a_link_into_a_committed_set_is_named_committed(tmp_path):
    """record-run's --run-dir, a link of one's own to a committed run's folder: judged by its
    folder alone, it was taken for a finished set's and the user told to remove that
    committed set's manifest."""
    repo = tmp_path / "repo"
    run_json = repo / "results" / "old" / "runs" / "r1" / "run.json"
    run_json.parent.mkdir(parents=True)
    run_json.write_text("{}\n")
    (repo / "results" / "old" / "MANIFEST.sha256").write_text("")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "results"], check=True)
    link = tmp_path / "mine"
    link.symlink_to(run_json.parent)
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", "record-run", "--run-dir", str(link), "--work-dir",
                           str(tmp_path / "w"), "--attic", str(tmp_path / "a"), "--timeout", "10", "--",
                           sys.executable, "-c", "pass"],
                          capture_output=True, text=True, timeout=120, cwd=repo)
    assert done.returncode == 2 and f"argument --run-dir: {link} is committed (git tracks it)" in done.stderr, \
        done.stderr
    assert sorted(p.name for p in run_json.parent.iterdir()) == ["run.json"]
