"""`sacscale verify NAME`, a set's name as the pipeline prints it, where the set is the folder
results/NAME: the refusal says which folder was meant (exit 1, as for any missing root)."""

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
