"""git_state and the stored diff read git's file names as bytes: any name a file system
allows (line separators, bytes that are not UTF-8, newlines, tabs, quotes), under either
core.quotePath, is one name, judged by its first folder; a rename or copy is judged by both
of its names."""

import os
import subprocess

import pytest

from sacscale.pipeline.environment import git_state, write_source_diff

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"]

# (test id, a folder name under results/ as bytes); each made of what git or str.splitlines()
# treats specially: line separators, a byte that is not UTF-8, a newline, a tab, a quote
NAMES = [
    ("line-separator", "a\u2028b".encode()),
    ("next-line", "a\u0085b".encode()),
    ("not-utf8", b"a\xffb"),
    ("newline", b"a\nb"),
    ("tab", b"a\tb"),
    ("quote", b'a"b'),
]


def _git(repo, *args):
    subprocess.run([*GIT, "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path):
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "results").mkdir()
    (repo / "src" / "a.py").write_text("x = 1\n")
    (repo / "results" / "README.md").write_text("evidence\n")
    subprocess.run([*GIT, "init", "-q", str(repo)], check=True)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    return repo


def _folder(repo, raw: bytes):
    folder = os.path.join(os.fsencode(repo), b"results", raw)
    os.mkdir(folder)
    with open(os.path.join(folder, b"plan.json"), "wb") as f:
        f.write(b"{}")


@pytest.mark.parametrize("quote_path", ["true", "false"])
@pytest.mark.parametrize("raw", [n for _, n in NAMES], ids=[i for i, _ in NAMES])
def test_a_results_folder_of_any_name_leaves_the_code_clean(repo, raw, quote_path):
    _git(repo, "config", "core.quotePath", quote_path)
    _folder(repo, raw)
    state = git_state(repo)
    assert state["dirty"] is False, state
    assert state["changed_count"] == 1
    assert state["changed_files"] == ["results/" + raw.decode("utf-8", errors="backslashreplace") + "/"]


@pytest.mark.parametrize("raw", [n for _, n in NAMES], ids=[i for i, _ in NAMES])
def test_a_source_file_of_any_name_makes_the_code_dirty_and_is_stored(repo, raw, tmp_path):
    _git(repo, "config", "core.quotePath", "false")
    with open(os.path.join(os.fsencode(repo), b"src", raw), "wb") as f:
        f.write(b"y = 2\n")
    state = git_state(repo)
    assert state["dirty"] is True and state["changed_count"] == 1
    info = write_source_diff(state, tmp_path / "source.diff")
    assert info["untracked_files"] == ["src/" + raw.decode("utf-8", errors="backslashreplace")]
    assert b"y = 2" in (tmp_path / "source.diff").read_bytes()


@pytest.mark.parametrize("how", ["rename", "copy"])
def test_a_staged_rename_or_copy_into_the_source_makes_the_code_dirty(repo, how):
    if how == "rename":
        _git(repo, "mv", "results/README.md", "src/evil.md")
    else:  # git reports a copy only when its source changed in the same commit
        (repo / "results" / "README.md").write_text("evidence\nmore\n")
        (repo / "src" / "evil.md").write_text("evidence\n")
        _git(repo, "add", "-A")
        _git(repo, "config", "status.renames", "copies")
    state = git_state(repo)
    assert state["dirty"] is True, state
    assert "results/README.md -> src/evil.md" in state["changed_files"]


def test_a_rename_within_results_leaves_the_code_clean(repo):
    _git(repo, "mv", "results/README.md", "results/OLD.md")
    state = git_state(repo)
    assert state["dirty"] is False and state["changed_files"] == ["results/README.md -> results/OLD.md"]


def test_untracked_source_counts_whatever_status_show_untracked_files_says(repo):
    _git(repo, "config", "status.showUntrackedFiles", "no")
    (repo / "src" / "new.py").write_text("z = 3\n")
    assert git_state(repo)["dirty"] is True


def test_verify_env_records_a_checkout_holding_a_name_that_is_not_utf8(repo, tmp_path):
    import json
    import sys

    _git(repo, "config", "core.quotePath", "false")
    _folder(repo, b"a\xffb")
    out = tmp_path / "environment.json"
    proc = subprocess.run([sys.executable, "-m", "sacscale.cli", "verify-env", "--output", str(out)], cwd=repo,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    git = json.loads(out.read_text(encoding="utf-8"))["workdir"]["git"]
    assert git["dirty"] is False and git["changed_files"] == ["results/a\\xffb/"]


def test_the_stored_diff_applies_whatever_the_users_diff_config_says(repo, tmp_path):
    clean = tmp_path / "clean"
    subprocess.run(["git", "clone", "-q", str(repo), str(clean)], check=True)
    for key, value in [("color.ui", "always"), ("diff.noprefix", "true"), ("diff.mnemonicPrefix", "true")]:
        _git(repo, "config", key, value)
    (repo / "src" / "a.py").write_text("x = 2\n")
    (repo / "src" / "new.py").write_text("y = 3\n")
    write_source_diff(git_state(repo), tmp_path / "source.diff")
    assert b"\x1b[" not in (tmp_path / "source.diff").read_bytes()
    subprocess.run(["git", "-C", str(clean), "apply", "--binary", str(tmp_path / "source.diff")], check=True)
    assert (clean / "src" / "a.py").read_text() == "x = 2\n" and (clean / "src" / "new.py").read_text() == "y = 3\n"
