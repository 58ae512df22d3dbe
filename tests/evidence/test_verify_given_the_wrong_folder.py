"""verify given a set's report folder or a folder inside a set: it answered "manifest is
missing (build it first: snakemake manifest)", the wrong cure; it now names the folder as what
it is and the set to verify, exit 2 as bad input (it was exit 1, the status of damaged
evidence)."""

from set_copies import copy_committed_set

from sacscale.cli import main

SET = "h200x1_shared_short"


def test_a_report_folder_is_named_with_its_set(tmp_path, capsys):
    root = copy_committed_set(tmp_path, SET)
    reports = root.parent.parent / "reports" / SET
    assert main(["verify", str(reports)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"sacscale verify: error: {reports} is a report folder; verify the set: sacscale verify {root}")


def test_a_run_folder_inside_a_set_is_named_with_its_set(tmp_path, capsys, monkeypatch):
    root = copy_committed_set(tmp_path, SET)
    monkeypatch.chdir(root.parent.parent)
    run = f"results/{SET}/runs/shared_r1_n1_pool7"
    assert main(["verify", run]) == 2
    assert capsys.readouterr().err.strip() == (
        f"sacscale verify: error: {run} is a folder inside the run set results/{SET}; verify the set: "
        f"sacscale verify results/{SET}")


def test_a_folder_inside_a_report_folder_is_named_with_its_set(tmp_path, capsys, monkeypatch):
    root = copy_committed_set(tmp_path, SET)
    monkeypatch.chdir(root.parent.parent)
    assert main(["verify", f"reports/{SET}/figures"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"sacscale verify: error: reports/{SET}/figures is a folder inside the report folder reports/{SET}; "
        f"verify the set: sacscale verify results/{SET}")


def test_the_folder_of_sets_and_the_checkout_name_one_set_to_verify(tmp_path, capsys, monkeypatch):
    root = copy_committed_set(tmp_path, SET)
    monkeypatch.chdir(root.parent.parent)
    for given, held in (("results", "1 run sets"), (".", "1 run sets"), ("reports", "the reports of 1 run sets")):
        assert main(["verify", given]) == 2
        assert capsys.readouterr().err.strip() == (
            f"sacscale verify: error: {given} is not a run set but holds {held}; verify one at a time, e.g.: "
            f"sacscale verify results/{SET}")


def test_a_folder_with_nothing_of_a_set_is_refused_before_its_tree_is_walked(tmp_path, capsys, monkeypatch):
    (tmp_path / "home" / "deep").mkdir(parents=True)
    (tmp_path / "home" / "deep" / "a.txt").write_text("not evidence\n")
    walked = []
    monkeypatch.setattr("sacscale.evidence.verify.irregular_files", lambda root: walked.append(root) or [])
    assert main(["verify", str(tmp_path / "home")]) == 2
    assert capsys.readouterr().err.strip() == (
        f"sacscale verify: error: {tmp_path / 'home'} is not a run set (it holds no MANIFEST.sha256, plan.json "
        "or runs/); a set is a folder such as results/<set>")
    assert walked == []


def test_a_manifest_given_does_not_make_any_folder_a_set(tmp_path, capsys, monkeypatch):
    root = copy_committed_set(tmp_path, SET)
    monkeypatch.chdir(root.parent.parent)
    manifest = f"results/{SET}/MANIFEST.sha256"
    assert main(["verify", "results", "--manifest", manifest]) == 2
    assert capsys.readouterr().err.strip() == (
        f"sacscale verify: error: results is not a run set but holds 1 run sets; verify one at a time, e.g.: "
        f"sacscale verify results/{SET}")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("not evidence\n")
    listed = len((root / "MANIFEST.sha256").read_text().splitlines())
    assert main(["verify", str(tmp_path / "other"), "--manifest", manifest]) == 2
    assert capsys.readouterr().err.strip() == (
        f"sacscale verify: error: {tmp_path / 'other'} holds none of the {listed} files {manifest} lists: not the "
        "set it hashes; verify that set, or give this one's manifest")
    assert main(["verify", f"results/{SET}", "--manifest", manifest]) == 0
