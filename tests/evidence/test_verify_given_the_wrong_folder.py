"""verify given a set's report folder or a folder inside a set: it answered "manifest is
missing (build it first: snakemake manifest)", the wrong cure; it now names the folder as what
it is and the set to verify, exiting as for a wrong root."""

from set_copies import copy_committed_set

from sacscale.cli import main

SET = "h200x1_shared_short"


def test_a_report_folder_is_named_with_its_set(tmp_path, capsys):
    root = copy_committed_set(tmp_path, SET)
    reports = root.parent.parent / "reports" / SET
    assert main(["verify", str(reports)]) == 1
    assert capsys.readouterr().err.strip() == (
        f"sacscale verify: error: {reports} is a report folder; verify the set: sacscale verify {root}")


def test_a_run_folder_inside_a_set_is_named_with_its_set(tmp_path, capsys, monkeypatch):
    root = copy_committed_set(tmp_path, SET)
    monkeypatch.chdir(root.parent.parent)
    run = f"results/{SET}/runs/shared_r1_n1_pool7"
    assert main(["verify", run]) == 1
    assert capsys.readouterr().err.strip() == (
        f"sacscale verify: error: {run} is a folder inside the run set results/{SET}; verify the set: "
        f"sacscale verify results/{SET}")
