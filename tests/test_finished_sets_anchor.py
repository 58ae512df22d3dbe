"""Which checkouts' results/ and reports/ a path written by its real path is mapped back
through. Before, only the working folder's: run from /tmp, a lock folder or output named by
the real path of a set kept on another disk was taken inside a finished set. Now the checkout
the code belongs to counts too, and links at any depth inside the set folders."""

import re

import pytest

from sacscale import finished_sets
from sacscale.locks import LockSettingError, lock_dir


def _checkout_with_a_set_elsewhere(tmp_path, inner_link=False):
    """checkout/results -> disk/results, a finished set S there; with `inner_link`, S's runs/
    kept on a third folder. Returns (checkout, the folder written by its real path)."""
    store = tmp_path / "disk" / "store"  # no parent named results/: no set by its real path
    (store / "S" / "runs").mkdir(parents=True)
    (store / "S" / "MANIFEST.sha256").write_text("")
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "results").symlink_to(store)
    if not inner_link:
        return checkout, store / "S" / "locks"
    runs = tmp_path / "runs_x"
    (store / "S" / "runs").rename(runs)
    (store / "S" / "runs").symlink_to(runs)
    return checkout, runs / "locks"


@pytest.mark.parametrize("inner_link", [False, True], ids=["results-linked", "runs-linked"])
def test_the_code_checkouts_sets_count_from_any_working_folder(tmp_path, monkeypatch, inner_link):
    checkout, folder = _checkout_with_a_set_elsewhere(tmp_path, inner_link)
    monkeypatch.setattr(finished_sets, "code_checkout", lambda: checkout)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert finished_sets.finished_set_holding(folder) == checkout / "results" / "S"
    monkeypatch.setenv("SACSCALE_LOCK_DIR", str(folder))
    with pytest.raises(LockSettingError, match=re.escape(f"lock folder {folder} is inside results/S, a finished")):
        lock_dir()


def test_a_path_outside_every_set_is_not_held(tmp_path, monkeypatch):
    checkout, _ = _checkout_with_a_set_elsewhere(tmp_path, inner_link=True)
    monkeypatch.setattr(finished_sets, "code_checkout", lambda: checkout)
    monkeypatch.chdir(tmp_path)
    assert finished_sets.finished_set_holding(tmp_path / "disk" / "other") is None


def test_this_code_belongs_to_its_checkout():
    assert finished_sets.code_checkout() / "src" / "sacscale" / "finished_sets.py" == \
        finished_sets.Path(finished_sets.__file__).resolve()
