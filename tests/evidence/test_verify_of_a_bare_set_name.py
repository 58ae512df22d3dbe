"""`sacscale verify NAME`, a set's name as the pipeline prints it, where the set is the folder
results/NAME: the refusal says which folder was meant (exit 2, as for any missing root: bad input). The
name with a trailing slash, or differing only in case from exactly one set, is pointed there too."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))

from one_line_cli import run  # noqa: E402

from sacscale.finished_sets import code_checkout  # noqa: E402


def _not_in(folder):
    return f"no such folder in the working folder {folder.resolve()}"


def test_a_set_name_in_the_working_folder_is_pointed_to_its_folder(capsys, tmp_path, monkeypatch):
    (tmp_path / "results" / "p90cc").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    code, err = run(capsys, "verify", "p90cc")
    assert code == 2
    assert err == f"sacscale verify: error: p90cc: {_not_in(tmp_path)}; did you mean results/p90cc?"


def test_from_a_subfolder_of_the_checkout_the_path_is_spelled_from_there(capsys, tmp_path, monkeypatch):
    (tmp_path / "Snakefile").write_text("")
    (tmp_path / "results" / "p90cc").mkdir(parents=True)
    (tmp_path / "src").mkdir()
    monkeypatch.chdir(tmp_path / "src")
    code, err = run(capsys, "verify", "p90cc")
    assert code == 2 and err.endswith(f"p90cc: {_not_in(tmp_path / 'src')}; did you mean ../results/p90cc?"), err


def test_a_set_of_the_codes_checkout_is_named_by_its_whole_path(capsys, tmp_path, monkeypatch):
    checkout = code_checkout()
    sets = sorted(p.name for p in (checkout / "results").iterdir() if p.is_dir()) if checkout else []
    if not sets:
        pytest.skip("needs the code's own checkout with a run set")
    monkeypatch.chdir(tmp_path)
    code, err = run(capsys, "verify", sets[0])
    assert code == 2 and err.endswith(f"did you mean {checkout / 'results' / sets[0]}?"), err


@pytest.mark.parametrize("given", ["nope", "results/p90cc", "x/p90cc"])
def test_no_hint_where_no_such_set_or_a_path_was_given(capsys, tmp_path, monkeypatch, given):
    (tmp_path / "results" / "p90cc").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "results" / "p90cc")
    code, err = run(capsys, "verify", given)
    assert code == 2 and err == f"sacscale verify: error: {given}: {_not_in(tmp_path / 'results' / 'p90cc')}", err


@pytest.mark.parametrize("given", ["p90cc/", "P90CC", "P90cc/"])
def test_a_trailing_slash_or_another_case_is_the_same_name(capsys, tmp_path, monkeypatch, given):
    (tmp_path / "results" / "p90cc").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    code, err = run(capsys, "verify", given)
    assert code == 2
    assert err == f"sacscale verify: error: {given}: {_not_in(tmp_path)}; did you mean results/p90cc?"


def test_no_guess_between_two_sets_differing_only_in_case(capsys, tmp_path, monkeypatch):
    (tmp_path / "results" / "p90cc").mkdir(parents=True)
    try:
        (tmp_path / "results" / "P90cc").mkdir()
    except FileExistsError:
        pytest.skip("a file system that ignores case")
    monkeypatch.chdir(tmp_path)
    code, err = run(capsys, "verify", "P90CC")
    assert code == 2 and err == f"sacscale verify: error: P90CC: {_not_in(tmp_path)}", err


def test_a_set_path_given_in_a_subfolder_of_the_checkout_names_the_root_to_run_it_from(capsys, tmp_path, monkeypatch):
    """README's `sacscale verify results/S` run from docs/: it said `evidence root is missing`,
    exit 1, the status of damaged evidence."""
    (tmp_path / "Snakefile").write_text("")
    (tmp_path / "results" / "p90cc").mkdir(parents=True)
    (tmp_path / "docs").mkdir()
    monkeypatch.chdir(tmp_path / "docs")
    code, err = run(capsys, "verify", "results/p90cc")
    assert code == 2 and err == (
        f"sacscale verify: error: results/p90cc: {_not_in(tmp_path / 'docs')}; run it from the repository root "
        f"{tmp_path.resolve()}, which holds it (or: sacscale verify ../results/p90cc)"), err


def test_a_set_path_of_the_codes_checkout_given_elsewhere_is_named_by_its_whole_path(capsys, tmp_path, monkeypatch):
    checkout = code_checkout()
    sets = sorted(p.name for p in (checkout / "results").iterdir() if p.is_dir()) if checkout else []
    if not sets:
        pytest.skip("needs the code's own checkout with a run set")
    monkeypatch.chdir(tmp_path)
    code, err = run(capsys, "verify", f"results/{sets[0]}")
    assert code == 2 and err.endswith(
        f"; the checkout {checkout} holds it: sacscale verify {checkout / 'results' / sets[0]}"), err


@pytest.mark.parametrize("given", ["absolute", "file"])
def test_an_absolute_path_or_a_file_is_bad_input_too(capsys, tmp_path, given):
    path = tmp_path / "p90cc"
    if given == "file":
        path.write_text("x")
    code, err = run(capsys, "verify", path)
    says = f"evidence root is not a directory ({path})" if given == "file" else "no such folder"
    assert code == 2 and err == f"sacscale verify: error: {path}: {says}", err
