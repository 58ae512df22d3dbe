"""New files are judged by the commit's own .gitignore files: a .gitignore that is new or not as
committed and hides a file the committed ones do not is refused, naming the file and the line
that hides it (the rebuilt tree would lack the file). A tool's cache folder, a dot-named folder
its own .gitignore ignores whole, is no code and no refusal."""

import pytest
from test_git_state_user_settings import LINES, _new_repo, _stored_diff, no_user_git_config

from sacscale.pipeline.recordable_checkout import CheckoutRefused


@pytest.fixture
def repo(tmp_path, monkeypatch):
    no_user_git_config(tmp_path, monkeypatch)
    return _new_repo(tmp_path / "repo", {"src/a.py": LINES, ".gitignore": "build/\n"})


def test_a_new_gitignore_hiding_a_new_module_is_refused(repo, tmp_path):
    # the reviewer's G2
    (repo / "src" / "p84new.py").write_text("NEW = 1\n")
    (repo / "src" / ".gitignore").write_text("p84new.py\n")
    (repo / "src" / "a.py").write_text(LINES + "import p84new\n")
    with pytest.raises(CheckoutRefused, match=r"^src/p84new\.py: a file the commit does not hold .* \(ignored by "
                                              r"src/\.gitignore:1 \('p84new\.py'\), a \.gitignore not as committed"):
        _stored_diff(repo, tmp_path)
    assert not (tmp_path / "source.diff").exists()


def test_a_changed_committed_gitignore_hiding_a_new_module_is_refused(repo, tmp_path):
    # the reviewer's G4
    (repo / "src" / "p84new.py").write_text("NEW = 1\n")
    with open(repo / ".gitignore", "a") as handle:
        handle.write("/src/p84new.py\n")
    with pytest.raises(CheckoutRefused, match=r"^src/p84new\.py: .* \(ignored by \.gitignore:2 "
                                              r"\('/src/p84new\.py'\)"):
        _stored_diff(repo, tmp_path)


def test_a_folder_of_code_its_own_gitignore_hides_is_refused(repo, tmp_path):
    (repo / "src" / "pkg").mkdir()
    (repo / "src" / "pkg" / ".gitignore").write_text("*\n")
    (repo / "src" / "pkg" / "mod.py").write_text("M = 1\n")
    with pytest.raises(CheckoutRefused, match=r"^src/pkg/"):
        _stored_diff(repo, tmp_path)


def test_what_the_committed_gitignore_ignores_and_a_tools_cache_are_no_refusal(repo, tmp_path):
    (repo / "build").mkdir()
    (repo / "build" / "out.py").write_text("made = 1\n")
    (repo / ".ruff_cache" / "0.1").mkdir(parents=True)
    (repo / ".ruff_cache" / ".gitignore").write_text("# Automatically created by ruff.\n*\n")
    (repo / ".ruff_cache" / "0.1" / "cache").write_bytes(b"\0\1")
    assert _stored_diff(repo, tmp_path) == b""
