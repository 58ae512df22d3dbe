"""Command-line input: seeds and numbers every command takes.
A negative seed reached numpy (`expected non-negative integer`, exit 1 as unexpected in
env-bench and solver-study, no option named in evaluate) and nan or inf reached an integer
conversion (`cannot convert float NaN to integer`; evaluate --settle-s inf: exit 1 as
unexpected). Each is now refused by argparse naming the option, exit 2."""

import subprocess
import sys

import pytest


def sacscale(*argv):
    return subprocess.run([sys.executable, "-m", "sacscale.cli", *argv], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("argv, says", [
    (["env-bench", "--seed=-1"], "argument --seed: '-1': a seed is a whole number in [0, "),
    (["solver-study", "--seed=1180591620717411303424"], "argument --seed: '1180591620717411303424': a seed is"),
    (["evaluate", "--output", "x.json", "--seed=-1", "run"], "argument --seed: '-1': a seed"),
    (["evaluate", "--output", "x.json", "--seconds=nan", "run"], "argument --seconds: 'nan': not a finite number"),
    (["evaluate", "--output", "x.json", "--settle-s=inf", "run"], "argument --settle-s: 'inf': not a finite number"),
    (["probe", "correctness", "--output", "p.json", "--seed=x"], "argument --seed: 'x': not a whole number"),
    (["compare-learning", "--half-width=nan", "a=run"], "argument --half-width: 'nan': not a finite number"),
    (["train", "--extra", "[" * 3000 + "]" * 3000], "argument --extra: JSON nested too deep"),
])
def test_a_bad_seed_or_a_number_that_is_not_finite_is_refused_naming_its_option(argv, says, tmp_path):
    done = sacscale(*argv)
    assert done.returncode == 2, done.stderr
    assert says in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert says in done.stderr.strip().splitlines()[-1]  # argparse: its usage, then one error line


def test_the_reference_trainers_seed_is_read_the_same_way():
    from sacscale.trainers.reference_options import build_parser
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--seed=-1"])


@pytest.mark.parametrize("extra", [["--summary", "mine.json"], ["--evaluations", "e.json"], ["--model", "m.json"]])
def test_an_input_given_beside_run_set_is_refused_not_ignored(extra):
    """`report --run-set S --summary X` read the set's summary and said nothing of X."""
    done = sacscale("report", "--run-set", "results/h200x1_shared_short", "--output-dir", "/nonexistent/x", *extra)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"sacscale report: {extra[0]}: not read with --run-set, which reads the set's own files; give --run-set "
        "alone, or every input without it"]


def _set_copy(tmp_path):
    import shutil
    from pathlib import Path
    repo = Path(__file__).resolve().parents[1]
    for sub in ("results", "reports"):
        shutil.copytree(repo / sub / "h200x1_shared_short", tmp_path / sub / "h200x1_shared_short")
    return tmp_path / "results" / "h200x1_shared_short"


@pytest.mark.parametrize("argv, replaced", [
    (["verify", "{S}", "--output", "{S}/MANIFEST.sha256"], "MANIFEST.sha256"),
    (["verify", "{S}", "--output", "{S}/runs/../summary.json"], "summary.json"),
    (["analyze-run", "{S}/runs/shared_r1_n1_pool7", "--output", "{S}/runs/shared_r1_n1_pool7/run.json"],
     "runs/shared_r1_n1_pool7/run.json"),
    (["manifest", "{S}", "--output", "{S}/runs/m.sha256"], None),
    (["compare-learning", "--figure", "{S}/runs/shared_r1_n1_pool7/x.png", "a={S}/runs/shared_r1_n1_pool7"], None),
])
def test_an_output_inside_the_evidence_a_command_reads_is_refused(tmp_path, argv, replaced):
    """`verify S --output S/MANIFEST.sha256` wrote the verdict over the manifest, exit 0;
    `analyze-run R --output R/run.json` replaced the run's record. The set is copied outside
    results/ and without its plan (a bench hashed by hand), where the rule for a finished
    set's folders (test_cli_outputs_in_finished_sets) does not reach: each command's own check
    refuses it."""
    import shutil
    root = tmp_path / "loose" / "h200x1_shared_short"
    shutil.copytree(_set_copy(tmp_path), root)
    (root / "plan.json").unlink()
    before = (root / replaced).read_bytes() if replaced else None
    done = sacscale(*[a.replace("{S}", str(root)) for a in argv])
    assert done.returncode == 2, done.stderr
    assert "whose files this command reads as evidence; write it elsewhere" in done.stderr.splitlines()[-1]
    if replaced:
        assert (root / replaced).read_bytes() == before


def test_the_pipelines_own_outputs_in_the_set_pass(tmp_path):
    root = _set_copy(tmp_path)
    (tmp_path / "reports" / root.name / "report.md").unlink()  # the verify rule runs before the report
    assert sacscale("verify", str(root), "--report-pending", "--output", str(root / "verify.json")).returncode == 0
    assert sacscale("manifest", str(root)).returncode == 0


@pytest.mark.parametrize("kind, says", [
    ("twice", "the key 'figure' is given twice"),
    ("digits", "an integer of 5,000 digits"),
    ("sparse", "larger than 64 MB"),
    ("surrogate", "a lone surrogate (\\udcff)"),  # UnicodeEncodeError writing the page, exit 1
])
def test_a_report_input_that_is_no_record_is_named_and_no_page_is_written(tmp_path, kind, says):
    """A summary with a key twice was reported from; one with an integer of 5,000 digits
    was `ValueError: Exceeds the limit` naming no file, exit 1; a sparse one of 6 GB was
    read whole into memory."""
    root = _set_copy(tmp_path)
    summary = tmp_path / "summary.json"
    text = (root / "summary.json").read_text()
    if kind == "twice":
        summary.write_text(text.replace('"figure":', '"figure": "x", "figure":', 1))
    elif kind == "digits":
        summary.write_text(text.replace("{", '{"zz": ' + "9" * 5000 + ", ", 1))
    elif kind == "surrogate":
        summary.write_text(text.replace("{", '{"zz": "H200\\udcff", ', 1))
    else:
        with open(summary, "wb") as fh:
            fh.truncate(6 << 30)
    out = tmp_path / "out"
    metrics = sorted(str(p) for p in (root / "metrics").glob("*"))
    done = sacscale("report", "--summary", str(summary), "--metrics", *metrics, "--output-md", str(out / "report.md"),
                    "--output-html", str(out / "report.html"), "--figures-dir", str(out / "figures"))
    assert done.returncode == 2
    assert done.stderr.strip() == f"sacscale report: error: {summary}: not a record this pipeline wrote " \
                                  f"({done.stderr.split('(', 1)[1].strip()}"
    assert says in done.stderr
    assert not (out / "report.md").exists() and not (out / "report.html").exists()


@pytest.mark.parametrize("name, says", [
    (b"a\nb", "'a\\nb': file names with line breaks"),  # the message was split over two lines
    ("x\u2028y".encode(), "'x\\u2028y': file names with line breaks"),  # splitlines() breaks there too
    # was UnicodeEncodeError, exit 1 as unexpected; then named as surrogates (`\udcff`), without the cure
    (b"a\xff", "the file 'a\\xff' is not valid UTF-8 (undecodable bytes in the name): the records are UTF-8; "
                "rename it"),
])
def test_a_set_file_whose_name_no_manifest_line_can_carry_is_named_on_one_line(tmp_path, name, says):
    import os
    root = _set_copy(tmp_path)
    open(os.path.join(os.fsencode(root), name), "wb").close()
    done = sacscale("manifest", str(root))
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and says in done.stderr, done.stderr


@pytest.mark.parametrize("argv, named", [
    (["aggregate", "m.json", "--csv", "", "--json", "s.json"], "--csv"),  # was ValueError: exit 1 as unexpected
    (["analyze-run", "run", "--output", ""], "--output"),  # likewise
    (["manifest", "set", "--output", ""], "--output"),  # was taken as left out: the default file written
    (["verify", "set", "--output="], "--output"),  # likewise: no verdict written, exit 0
    (["verify", "set", "--manifest", ""], "--manifest"),
    (["aggregate", "", "--csv", "a.csv", "--json", "a.json"], "metrics"),
])
def test_an_empty_value_is_refused_naming_its_option(argv, named, tmp_path):
    """`--output "$UNSET"`. An option whose default is empty (`--order`) still may be."""
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", *argv], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert f"argument {named}: an empty value (an unset variable?)" in done.stderr
    assert "Traceback" not in done.stderr and not list(tmp_path.iterdir())
