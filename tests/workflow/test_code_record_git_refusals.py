"""Where git itself will not read the checkout, verify-env says so in one line: a corrupt index
with git's own reason (not its command line), a FIFO where git reads the repository's own
attributes without waiting on it, a checkout git distrusts as another user's naming
the folder and its owner (not "not a git checkout", and not advising to trust it), a
core.worktree elsewhere naming the setting."""

import os
import signal
import subprocess

import pytest
from test_git_state_user_settings import _git, plain_repo

from sacscale.cli import main
from sacscale.commands import verify_env
from sacscale.pipeline.environment import git_state


@pytest.fixture
def repo(tmp_path, monkeypatch):
    return plain_repo(tmp_path, monkeypatch)


def _stop_waiting(signum, frame):
    raise TimeoutError("verify-env waited on the checkout")


def _verify_env(repo, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(verify_env, "collect", lambda: {"project": git_state(repo)})  # this checkout, not sacscale's
    old = signal.signal(signal.SIGALRM, _stop_waiting)
    signal.alarm(120)
    try:
        code = main(["verify-env", "--output", str(tmp_path / "env.json"), "--diff-output",
                     str(tmp_path / "source.diff")])
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    err = capsys.readouterr().err
    assert not (tmp_path / "env.json").exists() and not (tmp_path / "source.diff").exists()
    return code, err


def test_a_corrupt_index_is_one_line_with_gits_reason(repo, tmp_path, monkeypatch, capsys):
    # the reviewer's C1 (git takes a cut index of a few entries for a shorter one: a bad header it refuses)
    index = repo / ".git" / "index"
    index.write_bytes(b"XXXX" + index.read_bytes()[4:])
    code, err = _verify_env(repo, tmp_path, monkeypatch, capsys)
    assert code == 1 and err.count("\n") == 1, err
    assert "the code cannot be recorded: git " in err and err.endswith("fatal: index file corrupt\n")
    assert "CalledProcessError" not in err and "'-c'" not in err


def test_a_fifo_for_the_repositorys_own_attributes_is_one_line_without_waiting(repo, tmp_path, monkeypatch, capsys):
    # the reviewer's C4
    os.mkfifo(repo / ".git" / "info" / "attributes")
    code, err = _verify_env(repo, tmp_path, monkeypatch, capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert ".git/info/attributes: not a regular file (a FIFO, socket or device)" in err


def test_core_worktree_elsewhere_is_one_line_exit_2(repo, tmp_path, monkeypatch, capsys):
    clean = tmp_path / "clean"
    subprocess.run(["git", "clone", "-q", str(repo), str(clean)], check=True)
    _git(repo, "config", "core.worktree", str(clean))
    code, err = _verify_env(repo / "src", tmp_path, monkeypatch, capsys)
    assert code == 2 and err.count("\n") == 1 and "sets core.worktree to" in err, err


@pytest.mark.skipif(os.geteuid() != 0, reason="needs to own a checkout as another user")
def test_a_checkout_of_another_user_is_refused_naming_safe_directory(repo, tmp_path, monkeypatch, capsys):
    # the reviewer's L3: git's dubious-ownership check, run as root
    with open(repo / "src" / "a.py", "a") as handle:
        handle.write("# changed\n")
    for folder, _dirs, files in os.walk(repo):
        for name in [folder, *(os.path.join(folder, f) for f in files)]:
            os.lchown(name, 65534, 65534)
    code, err = _verify_env(repo, tmp_path, monkeypatch, capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert f"{repo} is owned by another user (nobody; git's 'dubious ownership' check)" in err
    assert "safe.directory" not in err and "not a git checkout" not in err


@pytest.mark.skipif(os.geteuid() != 0, reason="needs to own a repository as another user")
def test_a_gitdir_file_naming_another_users_repository_names_that_repository(repo, tmp_path, monkeypatch, capsys):
    # the reviewer's G1: the checkout is root's own, its repository folder another user's
    (repo / ".git").rename(tmp_path / "others-git")
    (repo / ".git").write_text(f"gitdir: {tmp_path / 'others-git'}\n")
    for folder, _dirs, files in os.walk(tmp_path / "others-git"):
        for name in [folder, *(os.path.join(folder, f) for f in files)]:
            os.lchown(name, 65534, 65534)
    code, err = _verify_env(repo, tmp_path, monkeypatch, capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert f"{tmp_path / 'others-git'} is owned by another user (nobody;" in err
    assert "safe.directory" not in err
