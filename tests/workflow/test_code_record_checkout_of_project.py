"""The recorded repository is the one holding the code that runs: a checkout whose core.worktree
points git at another tree is refused; the package unpacked into an ignored folder of another
repository, or a repository without a commit, is recorded as no checkout (no commit, no diff),
never as that repository's clean commit, nor is one that force-adds some of its files."""

import shutil
import subprocess

import pytest
from test_git_state_user_settings import GIT, LINES, _git, _new_repo

import sacscale as sacscale_package
from sacscale.pipeline.environment import git_state, project_state, write_source_diff
from sacscale.pipeline.recordable_checkout import CheckoutRefused

PACKAGE = {"src/sacscale/__init__.py": "", "src/sacscale/usage.py": LINES}


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    (tmp_path / "home").mkdir()


def test_core_worktree_pointing_at_a_clean_clone_is_refused(tmp_path, home):
    # the reviewer's G3
    copy = _new_repo(tmp_path / "copy", PACKAGE)
    subprocess.run(["git", "clone", "-q", str(copy), str(tmp_path / "clean")], check=True)
    with open(copy / "src" / "sacscale" / "usage.py", "a") as handle:
        handle.write("# p84 g3\n")
    _git(copy, "config", "core.worktree", str(tmp_path / "clean"))
    with pytest.raises(CheckoutRefused, match=r"sets core\.worktree to .*/clean, so git compares .*git config "
                                              r"--unset core\.worktree"):
        project_state(copy / "src" / "sacscale")


def test_the_package_in_an_ignored_folder_of_another_repository_is_no_checkout_of_it(tmp_path, home, monkeypatch):
    # the reviewer's G37
    outer = _new_repo(tmp_path / "outer", {".gitignore": "vendor/\n", "README": "outer\n"})
    project = outer / "vendor" / "sacscale"
    for name, text in PACKAGE.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text + "# p84 g37\n")
    monkeypatch.chdir(project)
    state = project_state(project / "src" / "sacscale")
    assert state["repository"] is False and "commit" not in state, state
    assert state["error"].startswith("not a git checkout of this project: ")
    assert state["installed_copy_of"] == str(outer)


def test_a_repository_without_a_commit_is_recorded_as_no_commit(tmp_path, home):
    # the reviewer's G34: `git init` over an unpacked tree
    tree = tmp_path / "unpacked"
    for name, text in PACKAGE.items():
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_text(text)
    subprocess.run([*GIT, "init", "-q", str(tree)], check=True)
    state = git_state(tree / "src" / "sacscale")
    assert state["repository"] is False and state["error"].startswith("a git repository with no commit yet")
    info = write_source_diff(state, tmp_path / "source.diff")
    assert info["bytes"] == 0 and info["apply"] is None


def test_a_linked_checkout_and_a_separate_git_folder_are_still_recorded(tmp_path, home):
    copy = _new_repo(tmp_path / "copy", PACKAGE)
    subprocess.run(["git", "clone", "-q", "--separate-git-dir", str(tmp_path / "sep.git"), str(copy),
                    str(tmp_path / "sep")], check=True)
    _git(copy, "worktree", "add", "-q", str(tmp_path / "linked"))
    for where in (tmp_path / "sep", tmp_path / "linked"):
        with open(where / "src" / "sacscale" / "usage.py", "a") as handle:
            handle.write("# changed\n")
        state = project_state(where / "src" / "sacscale")
        assert state["repository"] is True and state["dirty"] is True and state["path"] == str(where)
    shutil.rmtree(tmp_path / "linked")


def _partly_force_added(tmp_path):
    outer = _new_repo(tmp_path / "outer", {".gitignore": "vendor/\n", "README": "outer\n"})
    project = outer / "vendor" / "proj"
    for name, text in PACKAGE.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    _git(outer, "add", "-f", "vendor/proj/src/sacscale/__init__.py")
    _git(outer, "commit", "-qm", "one file of the package")
    return outer, project / "src" / "sacscale"


def test_the_package_partly_force_added_to_another_repository_is_no_checkout_of_it(tmp_path, home, monkeypatch):
    # the reviewer's B5: recorded as the outer repository's clean commit
    outer, package = _partly_force_added(tmp_path)
    state = git_state(package, package=True)
    assert state["repository"] is False and "commit" not in state, state
    assert state["error"] == (f"not a git checkout of this project: {package} lies in the git checkout {outer}, whose "
                              f".gitignore files ignore its Python files ({package}/usage.py), so no commit of it "
                              "holds the code")


def test_the_stored_diff_refuses_an_ignored_file_of_the_running_package(tmp_path, home, monkeypatch):
    # B5 where the checkout is taken all the same: the content check judges the package that runs
    outer, package = _partly_force_added(tmp_path)
    monkeypatch.setattr(sacscale_package, "__file__", str(package / "__init__.py"))
    state = git_state(outer)
    with pytest.raises(CheckoutRefused, match=r"^vendor/proj/src/sacscale/usage\.py: a file of the code that runs, "
                                              r"but the commit's \.gitignore files ignore it"):
        write_source_diff(state, tmp_path / "source.diff")
