"""A repository's own info/attributes (the checkout's, a linked worktree's common one, each
submodule's at any depth) is judged line by line as git reads it: only a line that sets, unsets
or unspecifies an attribute of some path is refused (a macro definition where a committed
attributes file uses its name); blank lines, comments after a byte-order mark, a pattern with no
attribute and a negative pattern set nothing. A file git cannot read is one line, exit 1."""

import subprocess

import pytest
from test_git_state_user_settings import LINES, _git, _new_repo, _stored_diff, plain_repo

from sacscale.cli import _error_line, main
from sacscale.commands import verify_env
from sacscale.pipeline.environment import git_state
from sacscale.pipeline.recordable_checkout import CheckoutRefused, setting_line


@pytest.fixture
def repo(tmp_path, monkeypatch):
    return plain_repo(tmp_path, monkeypatch)


def _own_attributes(repo, text: bytes):
    path = repo / _git(repo, "rev-parse", "--git-path", "info/attributes").strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text)
    return path


@pytest.mark.parametrize("text", [
    b"*.py\n", b"\xef\xbb\xbf# bom comment\n", b"\n  \t\r\n# c\n", b"!*.py filter=hide\n", b'"a b.py"\n',
    b"[attr]unused filter=hide\n", b"[attr]\n"], ids=["no-attribute", "bom-comment", "blanks", "negative",
                                                      "quoted-no-attribute", "unused-macro", "empty-macro"])
def test_lines_that_set_nothing_are_taken(repo, tmp_path, text):
    _own_attributes(repo, text)
    (repo / "src" / "a.py").write_text(LINES + "# changed\n")
    assert b"+# changed" in _stored_diff(repo, tmp_path)


@pytest.mark.parametrize("line", [
    b"a.txt filter=x", b"*.py -diff", b"*.py !eol", b'"src/a b.py" ident', b"\xef\xbb\xbf*.py text",
    b"\xef\xbb\xbf\n\xef\xbb\xbf# a mark not at the start is part of a pattern"],
    ids=["filter", "unset", "unspecified", "quoted", "bom-then-pattern", "late-bom"])
def test_lines_that_set_an_attribute_are_found(line):
    assert setting_line(b"# c\n\n" + line + b"\n", set()) is not None


def test_a_macro_a_committed_attributes_file_uses_is_refused(repo, tmp_path):
    (repo / ".gitattributes").write_text("*.py mine\n")
    _git(repo, "add", ".gitattributes")
    _git(repo, "commit", "-qm", "attributes")
    _git(repo, "config", "filter.hide.clean", "sed /SECRET/d")
    _own_attributes(repo, b"[attr]mine filter=hide\n")
    (repo / "src" / "a.py").write_text(LINES + "RATE = 1  # SECRET\n")
    with pytest.raises(CheckoutRefused, match=r"\('\[attr\]mine filter=hide'\)"):
        _stored_diff(repo, tmp_path)


def test_redefining_the_built_in_binary_macro_is_refused_where_it_is_used():
    assert setting_line(b"[attr]binary\n", {b"binary"}) == b"[attr]binary"
    assert setting_line(b"[attr]binary\n", set()) is None


def test_a_submodules_own_attributes_are_judged(repo, tmp_path):
    inner = _new_repo(tmp_path / "innersource", {"i.py": "I = 1\n"})
    sub = _new_repo(tmp_path / "subsource", {"m.py": "A = 1\n"})
    _git(sub, "submodule", "add", "-q", str(inner), "inner")
    _git(sub, "commit", "-qm", "inner")
    _git(repo, "submodule", "add", "-q", str(sub), "extlib")
    _git(repo, "submodule", "update", "-q", "--init", "--recursive")
    _git(repo, "commit", "-qm", "sub")
    _own_attributes(repo / "extlib" / "inner", b"# mine\ni.py filter=hide\n")
    with pytest.raises(CheckoutRefused, match=r"info/attributes: sets attributes of submodule extlib/inner's own "
                                              r"\('i.py filter=hide'\)"):
        _stored_diff(repo, tmp_path)


def test_a_linked_worktree_is_judged_by_the_common_attributes_file(repo, tmp_path):
    _git(repo, "worktree", "add", "-q", str(tmp_path / "wt"))
    (repo / ".git" / "info" / "attributes").write_text("src/a.py filter=hide\n")
    with pytest.raises(CheckoutRefused, match=rf"^{repo}/\.git/info/attributes: sets attributes of this checkout's"):
        _stored_diff(tmp_path / "wt", tmp_path)


def test_an_attributes_folder_is_one_line_naming_it_as_text_exit_1(repo, tmp_path, capsys, monkeypatch):
    (repo / ".git" / "info" / "attributes").mkdir()
    monkeypatch.setattr(verify_env, "collect", lambda: {"project": git_state(repo)})  # this checkout, not sacscale's
    out, diff = tmp_path / "env.json", tmp_path / "source.diff"
    code = main(["verify-env", "--output", str(out), "--diff-output", str(diff)])
    err = capsys.readouterr().err
    assert code == 1
    assert err.splitlines() == [
        f"sacscale verify-env: error: --diff-output: the code cannot be recorded: {repo}/.git/info/attributes: cannot "
        "be read (a folder, not a file); git reads the repository's own attributes from this file: make it a "
        "readable file or remove it"], err
    assert not out.exists() and not diff.exists()


def test_a_bytes_file_name_of_the_file_system_is_said_as_text(capsys):
    code = _error_line("verify-env", IsADirectoryError(21, "Is a directory", b"/x/\xff/attributes"))
    assert code == 2
    assert capsys.readouterr().err == "sacscale verify-env: error: /x/\\xff/attributes: is a directory, not a file\n"


def test_git_still_reads_the_attributes_the_judgement_takes_as_setting(repo):
    # the judgement follows git: a line it takes as setting nothing sets nothing in git either
    (repo / ".git" / "info" / "attributes").write_bytes(b"\xef\xbb\xbf# c\n*.py\n!src/a.py diff=x\n")
    said = subprocess.run(["git", "-C", str(repo), "check-attr", "-a", "src/a.py"], capture_output=True, text=True)
    assert said.stdout == ""
