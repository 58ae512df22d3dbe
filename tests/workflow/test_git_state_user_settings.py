"""The code record (git_state, the stored diff) and verify's git reads say what the checkout
holds whatever the user's git settings and shell say: a diff's context, submodule format,
filters and excludes (the user's and the checkout's own), index flags that hide a change, and
GIT_* variables that point git at another repository (for the record and for every other
reading of what git tracks). A checkout whose code the diff could not rebuild is refused.
The stored diff applies in a clean clone and rebuilds the tree that ran."""

import subprocess

import pytest

from sacscale.commands._output_checks import _tracked_under as tracked_under
from sacscale.evidence import code_history
from sacscale.evidence.runset import _tracked as runset_tracked
from sacscale.evidence.status import committed_sets
from sacscale.evidence.stored_diff import diff_apply_findings
from sacscale.git_command import git_environment
from sacscale.pipeline.environment import NESTED_REPOSITORY, git_state, write_source_diff
from sacscale.pipeline.recordable_checkout import CheckoutRefused

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false",
       "-c", "protocol.file.allow=always"]
LINES = "".join(f"line {i}\n" for i in range(1, 11))


def _git(repo, *args):
    return subprocess.run([*GIT, "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def _new_repo(path, files):
    path.mkdir(parents=True)
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    subprocess.run([*GIT, "init", "-q", str(path)], check=True)
    _git(path, "add", "-A")
    _git(path, "commit", "-qm", "base")
    return path


def no_user_git_config(tmp_path, monkeypatch) -> None:
    """The user's own global git configuration: a new empty HOME, until a test writes it."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    (tmp_path / "home").mkdir()


def plain_repo(tmp_path, monkeypatch):
    no_user_git_config(tmp_path, monkeypatch)
    return _new_repo(tmp_path / "repo", {"src/a.py": LINES, "README.md": "readme\n"})


@pytest.fixture
def repo(tmp_path, monkeypatch):
    return plain_repo(tmp_path, monkeypatch)


def _user_config(tmp_path, *settings):
    for key, value in settings:
        subprocess.run(["git", "config", "--file", str(tmp_path / "home" / ".gitconfig"), key, value], check=True)


def _stored_diff(repo, tmp_path) -> bytes:
    write_source_diff(git_state(repo), tmp_path / "source.diff")
    return (tmp_path / "source.diff").read_bytes()


def _rebuilt_in_a_clean_clone(repo, tmp_path, monkeypatch, name):
    """The file `name` of a clone at HEAD with the stored diff applied (the page's rebuild line)."""
    diff = _stored_diff(repo, tmp_path)
    clean = tmp_path / "clean"
    with monkeypatch.context() as m:
        m.setenv("HOME", str(tmp_path))  # a clean user: none of the settings under test
        subprocess.run(["git", "clone", "-q", str(repo), str(clean)], check=True)
        subprocess.run(["git", "-C", str(clean), "apply", "--binary", str(tmp_path / "source.diff")], check=True)
    return diff, (clean / name).read_text()


@pytest.mark.parametrize("how", ["diff.context", "GIT_DIFF_OPTS"])
def test_the_stored_diff_has_context_whatever_the_user_says(repo, tmp_path, monkeypatch, how):
    if how == "diff.context":
        _user_config(tmp_path, ("diff.context", "0"))
    else:
        monkeypatch.setenv("GIT_DIFF_OPTS", "-u0")
    changed = LINES.replace("line 5\n", "line five\n")
    (repo / "src" / "a.py").write_text(changed)
    diff, rebuilt = _rebuilt_in_a_clean_clone(repo, tmp_path, monkeypatch, "src/a.py")
    assert b"@@ -2,7 +2,7 @@" in diff
    assert rebuilt == changed


@pytest.mark.parametrize("setting", [("diff.context", "0"), ("apply.whitespace", "error")], ids=lambda s: s[0])
def test_a_legitimate_dirty_set_passes_its_own_diff_check_whatever_the_user_says(repo, tmp_path, setting):
    _user_config(tmp_path, setting)
    commit = _git(repo, "rev-parse", "HEAD").strip()
    (repo / "src" / "a.py").write_text(LINES.replace("line 5\n", "line five  \n"))  # trailing spaces too
    env = {"project": {"commit": commit, "diff": {"file": "source.diff"}}}
    _stored_diff(repo, tmp_path)
    assert diff_apply_findings(tmp_path, env, repo) == ([], [])


@pytest.mark.parametrize("form", ["log", "diff"])
def test_a_moved_submodule_is_stored_as_its_gitlink(repo, tmp_path, form):
    sub = _new_repo(tmp_path / "subsource", {"x": "1\n"})
    _git(repo, "submodule", "add", "-q", str(sub), "sub")
    _git(repo, "commit", "-qm", "sub")
    old = _git(repo / "sub", "rev-parse", "HEAD").strip()
    (repo / "sub" / "y").write_text("2\n")
    _git(repo / "sub", "add", "y")
    _git(repo / "sub", "commit", "-qm", "y")
    new = _git(repo / "sub", "rev-parse", "HEAD").strip()
    _user_config(tmp_path, ("diff.submodule", form), ("diff.ignoreSubmodules", "all"))
    diff = _stored_diff(repo, tmp_path)
    assert f"-Subproject commit {old}\n+Subproject commit {new}\n".encode() in diff
    assert b"sub/y" not in diff


@pytest.mark.parametrize("flag", ["--skip-worktree", "--assume-unchanged"])
def test_an_index_flag_does_not_hide_a_changed_source_file(repo, tmp_path, flag):
    _git(repo, "update-index", flag, "src/a.py")
    (repo / "src" / "a.py").write_text(LINES + "# changed\n")
    state = git_state(repo)
    assert state["dirty"] is True and state["changed_files"] == ["src/a.py"], state
    assert b"+# changed" in _stored_diff(repo, tmp_path)
    tag = "S" if flag == "--skip-worktree" else "h"
    assert _git(repo, "ls-files", "-v", "src/a.py") == f"{tag} src/a.py\n"  # the checkout's own index untouched


def test_an_index_flag_on_an_unchanged_file_leaves_the_code_clean(repo, tmp_path):
    _git(repo, "update-index", "--skip-worktree", "src/a.py")
    _git(repo, "update-index", "--assume-unchanged", "README.md")
    assert git_state(repo)["dirty"] is False
    assert _stored_diff(repo, tmp_path) == b""


def test_the_users_excludes_file_does_not_hide_a_new_source_file(repo, tmp_path):
    (tmp_path / "home" / "ignore").write_text("zz_*.py\n")
    _user_config(tmp_path, ("core.excludesFile", str(tmp_path / "home" / "ignore")))
    (repo / "src" / "zz_new.py").write_text("new = 1\n")
    state = git_state(repo)
    assert state["dirty"] is True and state["changed_files"] == ["src/zz_new.py"]
    assert b"+new = 1" in _stored_diff(repo, tmp_path)


def test_the_users_clean_filter_does_not_rewrite_the_stored_diff(repo, tmp_path, monkeypatch):
    (tmp_path / "home" / "attributes").write_text("* filter=up\n")
    _user_config(tmp_path, ("core.attributesFile", str(tmp_path / "home" / "attributes")),
                 ("filter.up.clean", "tr a-z A-Z"))
    changed = LINES.replace("line 5\n", "line five\n")
    (repo / "src" / "a.py").write_text(changed)
    diff, rebuilt = _rebuilt_in_a_clean_clone(repo, tmp_path, monkeypatch, "src/a.py")
    assert b"LINE" not in diff and rebuilt == changed


@pytest.mark.parametrize("variables", [
    ("GIT_DIR", "GIT_WORK_TREE"),
    ("GIT_INDEX_FILE",),
    ("GIT_CONFIG_COUNT",),
], ids=["dir-and-work-tree", "index-file", "config-count"])
def test_git_variables_of_the_users_shell_do_not_redirect_the_record(repo, tmp_path, monkeypatch, variables):
    other = _new_repo(tmp_path / "other", {"b.txt": "other\n"})
    (other / "b.txt").write_text("other changed\n")
    values = {"GIT_DIR": str(other / ".git"), "GIT_WORK_TREE": str(other),
              "GIT_INDEX_FILE": str(other / ".git" / "index"), "GIT_CONFIG_COUNT": "1"}
    for name in variables:
        monkeypatch.setenv(name, values[name])
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "diff.context")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "0")
    (repo / "src" / "a.py").write_text(LINES.replace("line 5\n", "line five\n"))
    with monkeypatch.context() as m:
        for name in variables:
            m.delenv(name)
        commit = _git(repo, "rev-parse", "HEAD").strip()
    state = git_state(repo)
    assert (state["path"], state["commit"], state["dirty"]) == (str(repo), commit, True)
    assert state["changed_files"] == ["src/a.py"]
    diff = _stored_diff(repo, tmp_path)
    assert b"@@ -2,7 +2,7 @@" in diff and b"b.txt" not in diff
    assert code_history.git_output(["rev-parse", "HEAD"], repo) == commit + "\n"


def test_the_checkouts_own_exclude_file_does_not_hide_a_new_source_file(repo, tmp_path):
    (repo / ".git" / "info" / "exclude").write_text("zz_*.py\n")
    (repo / "src" / "zz_new.py").write_text("new = 1\n")
    state = git_state(repo)
    assert state["dirty"] is True and state["changed_files"] == ["src/zz_new.py"]
    assert b"+new = 1" in _stored_diff(repo, tmp_path)


def test_the_projects_gitignore_still_decides_what_is_untracked(repo, tmp_path):
    (repo / ".gitignore").write_text("build/\n")
    _git(repo, "add", ".gitignore")
    _git(repo, "commit", "-qm", "ignore")
    (repo / "build").mkdir()
    (repo / "build" / "out.py").write_text("made = 1\n")
    assert git_state(repo)["dirty"] is False
    assert _stored_diff(repo, tmp_path) == b""


def test_a_clean_filter_of_the_checkouts_own_attributes_is_refused(repo, tmp_path):
    _git(repo, "config", "filter.hide.clean", "sed /SECRET/d")
    (repo / ".git" / "info" / "attributes").write_text("# mine\nsrc/a.py filter=hide\n")
    (repo / "src" / "a.py").write_text(LINES + "RATE = 1  # SECRET\n")
    with pytest.raises(CheckoutRefused, match=r"info/attributes: sets attributes of this checkout's own "
                                              r"\('src/a.py filter=hide'\).*committed \.gitattributes"):
        _stored_diff(repo, tmp_path)
    assert not (tmp_path / "source.diff").exists()


def test_a_filter_after_a_long_run_of_comments_in_the_checkouts_attributes_is_refused(repo, tmp_path):
    comments = ("#" + "x" * 98 + "\n") * 11_000  # over a mebibyte before the line that sets a filter
    (repo / ".git" / "info" / "attributes").write_text(comments + "src/a.py filter=hide\n")
    with pytest.raises(CheckoutRefused, match=r"\('src/a.py filter=hide'\)"):
        _stored_diff(repo, tmp_path)


@pytest.mark.parametrize("how", ["new", "new-and-ignored", "changed"])
def test_a_gitattributes_not_as_committed_is_refused(repo, tmp_path, how):
    _git(repo, "config", "filter.hide.clean", "sed /SECRET/d")
    (repo / ".gitignore").write_text(".gitattributes\n" if how == "new-and-ignored" else "")
    if how == "changed":
        (repo / "src" / ".gitattributes").write_text("*.md text\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "attributes")
    (repo / "src" / ".gitattributes").write_text("a.py filter=hide\n")
    (repo / "src" / "a.py").write_text(LINES + "RATE = 1  # SECRET\n")
    word = "changed" if how == "changed" else "new"
    with pytest.raises(CheckoutRefused, match=rf"^src/\.gitattributes: a {word} \.gitattributes, not as committed; "
                                              r".*commit it or undo it"):
        _stored_diff(repo, tmp_path)
    assert not (tmp_path / "source.diff").exists()


def test_a_committed_gitattributes_is_no_refusal(repo, tmp_path):
    (repo / "src" / ".gitattributes").write_text("*.py text\n")
    _git(repo, "add", "src/.gitattributes")
    _git(repo, "commit", "-qm", "attributes")
    (repo / "src" / "a.py").write_text(LINES + "# changed\n")
    assert b"+# changed" in _stored_diff(repo, tmp_path)


def test_git_never_reads_the_system_attributes_file(monkeypatch):
    # /etc/gitattributes filters what is compared as a user's attributes file would
    monkeypatch.setenv("GIT_ATTR_NOSYSTEM", "0")
    env = git_environment()
    assert env["GIT_ATTR_NOSYSTEM"] == "1" and "GIT_CONFIG_NOSYSTEM" not in env


def test_comments_alone_in_the_checkouts_attributes_are_no_refusal(repo, tmp_path):
    (repo / ".git" / "info" / "attributes").write_text("# nothing set\n\n")
    (repo / "src" / "a.py").write_text(LINES + "# changed\n")
    assert b"+# changed" in _stored_diff(repo, tmp_path)


def test_a_nested_repository_is_listed_as_not_stored(repo, tmp_path):
    _new_repo(repo / "vendor" / "lib", {"mod.py": "x = 1\n"})
    info = write_source_diff(git_state(repo), tmp_path / "source.diff")
    assert info["untracked_files"] == [] and info["bytes"] == 0
    assert info["untracked_not_stored"] == [{"path": "vendor/lib/", "why": NESTED_REPOSITORY}]
    assert "untracked_not_stored" in info["apply"]


@pytest.mark.parametrize("change", ["modified", "new", "new-in-its-own-exclude"])
def test_a_submodule_with_changes_of_its_own_is_refused(repo, tmp_path, change):
    sub = _new_repo(tmp_path / "subsource", {"m.py": "A = 1\n"})
    _git(repo, "submodule", "add", "-q", str(sub), "extlib")
    _git(repo, "commit", "-qm", "sub")
    if change == "new-in-its-own-exclude":  # the submodule's info/exclude, as the checkout's own, decides nothing
        exclude = _git(repo / "extlib", "rev-parse", "--git-path", "info/exclude").strip()
        (repo / "extlib" / exclude).parent.mkdir(parents=True, exist_ok=True)
        (repo / "extlib" / exclude).write_text("n.py\n")
    (repo / "extlib" / ("m.py" if change == "modified" else "n.py")).write_text("A = 2\n")
    with pytest.raises(CheckoutRefused, match=r"^submodule extlib: its work tree has changes .* commit them in the "
                                              r"submodule"):
        _stored_diff(repo, tmp_path)


@pytest.mark.parametrize("reader", ["committed_sets", "runset_tracked", "output_tracked_under"])
def test_git_dir_of_the_users_shell_does_not_hide_committed_files(repo, tmp_path, monkeypatch, reader):
    (repo / "results" / "set1").mkdir(parents=True)
    (repo / "results" / "set1" / "summary.json").write_text("{}\n")
    _git(repo, "add", "results")
    _git(repo, "commit", "-qm", "set")
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / "empty.git")], check=True)
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "empty.git"))
    monkeypatch.chdir(tmp_path)
    found = {"committed_sets": lambda: committed_sets(repo),
             "runset_tracked": lambda: runset_tracked(repo, [repo / "results" / "set1"]),
             "output_tracked_under": lambda: tracked_under(repo / "results" / "set1" / "summary.json")}[reader]()
    assert found in (["set1"], 1)
