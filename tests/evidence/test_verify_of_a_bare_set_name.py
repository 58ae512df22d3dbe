"""`sacscale verify NAME`, a set's name as the pipeline prints it, where the set is the folder
results/NAME: the refusal says which folder was meant (exit 1, as for any missing root). The
name with a trailing slash, or differing only in case from exactly one set, is pointed there too."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))

from one_line_cli import run  # noqa: E402

from sacscale.finished_sets import code_checkout  # noqa: E402


def test_a_set_name_in_the_working_folder_is_pointed_to_its_folder(capsys, tmp_path, monkeypatch):
    (tmp_path / "results" / "p90cc").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    code, err = run(capsys, "verify", "p90cc")
    assert code == 1
    assert err == "sacscale verify: error: p90cc: evidence root is missing; did you mean results/p90cc?"


def test_from_a_subfolder_of_the_checkout_the_path_is_spelled_from_there(capsys, tmp_path, monkeypatch):
    (tmp_path / "Snakefile").write_text("")
    (tmp_path / "results" / "p90cc").mkdir(parents=True)
    (tmp_path / "src").mkdir()
    monkeypatch.chdir(tmp_path / "src")
    code, err = run(capsys, "verify", "p90cc")
    assert code == 1 and err.endswith("p90cc: evidence root is missing; did you mean ../results/p90cc?"), err


def test_a_set_of_the_codes_checkout_is_named_by_its_whole_path(capsys, tmp_path, monkeypatch):
    checkout = code_checkout()
    sets = sorted(p.name for p in (checkout / "results").iterdir() if p.is_dir()) if checkout else []
    if not sets:
        pytest.skip("needs the code's own checkout with a run set")
    monkeypatch.chdir(tmp_path)
    code, err = run(capsys, "verify", sets[0])
    assert code == 1 and err.endswith(f"did you mean {checkout / 'results' / sets[0]}?"), err


@pytest.mark.parametrize("given", ["nope", "results/p90cc", "x/p90cc"])
def test_no_hint_where_no_such_set_or_a_path_was_given(capsys, tmp_path, monkeypatch, given):
    (tmp_path / "results" / "p90cc").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "results" / "p90cc")
    code, err = run(capsys, "verify", given)
    assert code == 1 and err == f"sacscale verify: error: {given}: evidence root is missing", err


@pytest.mark.parametrize("given", ["p90cc/", "P90CC", "P90cc/"])
def test_a_trailing_slash_or_another_case_is_the_same_name(capsys, tmp_path, monkeypatch, given):
    (tmp_path / "results" / "p90cc").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    code, err = run(capsys, "verify", given)
    assert code == 1
    assert err == f"sacscale verify: error: {given}: evidence root is missing; did you mean results/p90cc?"


def test_no_guess_between_two_sets_differing_only_in_case(capsys, tmp_path, monkeypatch):
    (tmp_path / "results" / "p90cc").mkdir(parents=True)
    try:
        (tmp_path / "results" / "P90cc").mkdir()
    except FileExistsError:
        pytest.skip("a file system that ignores case")
    monkeypatch.chdir(tmp_path)
    code, err = run(capsys, "verify", "P90CC")
    assert code == 1 and err == "sacscale verify: error: P90CC: evidence root is missing", err
