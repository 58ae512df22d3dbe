"""The stored diff is checked against the bytes on disk, trusting neither git's index, its stat
data, its configuration nor replace refs: a file that differs from the commit and is not in the
diff is refused, naming it and what hid it; a link out of the checkout (or where the commit has
a file) is refused; the record's dirty flag is the stored diff's own answer."""

import os
import time

import pytest
from test_git_state_user_settings import LINES, _git, _new_repo, _stored_diff, plain_repo

from sacscale.commands import verify_env
from sacscale.pipeline.code_content import check_record
from sacscale.pipeline.environment import git_state, write_source_diff
from sacscale.pipeline.recordable_checkout import CheckoutRefused


@pytest.fixture
def repo(tmp_path, monkeypatch):
    return plain_repo(tmp_path, monkeypatch)


@pytest.mark.parametrize("staged", [False, True], ids=["replaced", "replaced-and-staged"])
def test_a_replace_ref_of_head_does_not_hide_the_change(repo, tmp_path, staged):
    # the reviewer's G1 / G1b: HEAD replaced by a commit holding the change
    head = _git(repo, "rev-parse", "HEAD").strip()
    with open(repo / "src" / "a.py", "a") as handle:
        handle.write("# p84 change\n")
    _git(repo, "commit", "-qam", "change")
    changed = _git(repo, "rev-parse", "HEAD").strip()
    _git(repo, "reset", "-q", "--soft", head)
    _git(repo, "reset", "-q")
    _git(repo, "replace", head, changed)
    if staged:
        _git(repo, "add", "src/a.py")
    state = git_state(repo)
    assert state["commit"] == head and state["dirty"] is True
    assert b"+# p84 change" in _stored_diff(repo, tmp_path)


def test_core_ignore_case_does_not_hide_a_new_module_named_as_a_tracked_one(repo, tmp_path):
    # the reviewer's G40: on a case-sensitive file system
    _git(repo, "config", "core.ignoreCase", "true")
    (repo / "src" / "A.py").write_text("VALUE = 3\n")
    (repo / "src" / "units.py").write_text("import A\n")
    info = write_source_diff(git_state(repo), tmp_path / "source.diff")
    assert info["untracked_files"] == ["src/A.py", "src/units.py"]


def test_core_check_stat_and_trust_ctime_do_not_hide_a_same_size_edit(repo, tmp_path):
    # the reviewer's G41: the index refreshed, then a same-size edit with its mtime put back
    path = repo / "src" / "a.py"
    os.utime(path, (1_000_000_000, 1_000_000_000))
    _git(repo, "status", "--porcelain")
    _git(repo, "config", "core.checkStat", "minimal")
    _git(repo, "config", "core.trustctime", "false")
    time.sleep(1.1)  # git compares whole seconds of the change time: the edit is a later one
    path.write_text(LINES.replace("line 5", "LINE 5"))
    os.utime(path, (1_000_000_000, 1_000_000_000))
    assert git_state(repo)["dirty"] is True
    assert b"+LINE 5" in _stored_diff(repo, tmp_path)


def test_a_changed_file_git_left_out_of_the_diff_is_refused_naming_the_setting(repo):
    # the class: whatever hid it from git, the bytes on disk are the judge
    _git(repo, "config", "core.checkStat", "minimal")
    (repo / "src" / "a.py").write_text(LINES + "# hidden\n")
    with pytest.raises(CheckoutRefused, match=r"^src/a\.py: its bytes on disk are not the commit's, but git's diff "
                                              r"does not hold it \(this checkout sets core\.checkstat=minimal\)"):
        check_record(str(repo), b"", [])


def test_a_new_file_git_left_out_of_its_listing_is_refused(repo):
    (repo / "src" / "b.py").write_text("B = 1\n")
    with pytest.raises(CheckoutRefused, match=r"^src/b\.py: a file the commit does not hold and its \.gitignore "
                                              r"files do not ignore, but git's listing does not hold it"):
        check_record(str(repo), b"", [])


def test_a_clean_checkout_and_a_recorded_change_pass_the_check(repo, tmp_path):
    assert _stored_diff(repo, tmp_path) == b""
    (repo / "src" / "a.py").write_text(LINES + "# changed\n")
    (repo / "README.md").unlink()
    (repo / "src" / "b.py").symlink_to("a.py")  # a link inside the checkout is stored as a link
    diff = _stored_diff(repo, tmp_path)
    assert b"+# changed" in diff and b"deleted file mode" in diff and b"new file mode 120000" in diff


def test_a_tracked_source_file_replaced_by_a_link_is_refused(repo, tmp_path):
    # the reviewer's G11
    (tmp_path / "evil.py").write_text(LINES + "# p84 evil\n")
    (repo / "src" / "a.py").unlink()
    (repo / "src" / "a.py").symlink_to(tmp_path / "evil.py")
    with pytest.raises(CheckoutRefused, match=r"^src/a\.py: a link where the commit has a file"):
        _stored_diff(repo, tmp_path)


def test_a_new_source_link_out_of_the_checkout_is_refused(repo, tmp_path):
    # the reviewer's G11b
    (tmp_path / "evil.py").write_text("EVIL = 1\n")
    (repo / "src" / "link.py").symlink_to(tmp_path / "evil.py")
    with pytest.raises(CheckoutRefused, match=rf"^src/link\.py: a link to {tmp_path}/evil\.py, outside the checkout"):
        _stored_diff(repo, tmp_path)


def test_the_dirty_flag_is_the_stored_diffs_answer(repo, tmp_path):
    # the reviewer's W7: a file written between git status and the diff
    state = git_state(repo)
    assert state["dirty"] is False
    (repo / "src" / "a.py").write_text(LINES + "# saved meanwhile\n")
    env = {"project": state, "workdir": {"git": dict(state)}}
    verify_env._write_diff(env, str(tmp_path / "source.diff"))
    assert env["project"]["diff"]["bytes"] > 0
    assert env["project"]["dirty"] is True and env["workdir"]["git"]["dirty"] is True


def test_files_a_sparse_checkout_leaves_out_are_no_change(repo, tmp_path):
    (repo / "docs").mkdir()
    (repo / "docs" / "x.md").write_text("x\n")
    _git(repo, "add", "docs")
    _git(repo, "commit", "-qm", "docs")
    _git(repo, "sparse-checkout", "set", "--cone", "src")
    assert not (repo / "docs").exists()
    assert _stored_diff(repo, tmp_path) == b""
    (repo / "src" / "a.py").write_text(LINES + "# changed\n")
    assert b"+# changed" in _stored_diff(repo, tmp_path)


def _ignore_build(repo):
    (repo / ".gitignore").write_text("/build/\n__pycache__/\n")
    _git(repo, "add", ".gitignore")
    _git(repo, "commit", "-qm", "ignore build")
    (repo / "build" / "evil").mkdir(parents=True)
    (repo / "build" / "evil" / "__init__.py").write_text("EVIL = 1\n")


@pytest.mark.parametrize("link, target", [("src/usage", "../build/evil"), ("src/__pycache__", "../build/evil")],
                         ids=["package-folder", "pycache"])
def test_a_new_link_to_a_folder_is_refused_naming_it(repo, tmp_path, link, target):
    # the reviewer's B4 and B4b: a link to an (ignored) folder was recorded clean with 0 bytes stored
    _ignore_build(repo)
    (repo / link).symlink_to(target)
    with pytest.raises(CheckoutRefused, match=rf"^{link}: a link to the folder {target}: Python imports the code"):
        _stored_diff(repo, tmp_path)


def test_a_tracked_folder_replaced_by_a_link_to_an_ignored_copy_is_refused(repo, tmp_path):
    # the reviewer's B6: the stored diff only deleted the folder's files
    _ignore_build(repo)
    (repo / "build" / "src").mkdir()
    (repo / "build" / "src" / "a.py").write_text(LINES + "# marker\n")
    (repo / "src" / "a.py").unlink()
    (repo / "src").rmdir()
    (repo / "src").symlink_to("build/src")
    with pytest.raises(CheckoutRefused, match=r"^src: a link to the folder build/src"):
        _stored_diff(repo, tmp_path)


def test_a_link_to_an_ignored_file_is_refused(repo, tmp_path):
    _ignore_build(repo)
    (repo / "src" / "evil.py").symlink_to("../build/evil/__init__.py")
    with pytest.raises(CheckoutRefused, match=r"^src/evil\.py: a link to \.\./build/evil/__init__\.py, a file "
                                              r"neither the commit nor the stored diff holds"):
        _stored_diff(repo, tmp_path)


def test_a_name_counts_as_stored_only_where_the_patch_holds_it(repo):
    (repo / "src" / "b.py").write_text("B = 1\n")
    with pytest.raises(CheckoutRefused, match=r"^src/b\.py: a file the commit does not hold"):
        check_record(str(repo), b"", [])  # a name git listed but the patch does not hold is not stored


def test_an_ignored_file_of_the_code_is_refused(tmp_path, monkeypatch):
    # the reviewer's B5: the project in an ignored vendor/ folder with one file force-added
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    outer = _new_repo(tmp_path / "outer", {".gitignore": "vendor/\n", "README.md": "outer\n"})
    package = outer / "vendor" / "proj" / "src" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "mod.py").write_text("M = 1\n")
    _git(outer, "add", "-f", "vendor/proj/src/pkg/__init__.py")
    _git(outer, "commit", "-qm", "one file of the package")
    with pytest.raises(CheckoutRefused, match=r"^vendor/proj/src/pkg/mod\.py: a file of the code that runs, but "
                                              r"the commit's \.gitignore files ignore it"):
        check_record(str(outer), b"", [], [b"vendor/proj/src/pkg"])
    (package / "mod.py").unlink()
    assert check_record(str(outer), b"", [], [b"vendor/proj/src/pkg"]) == set()



def test_links_outside_the_code_are_listed_not_refused(repo, tmp_path, monkeypatch):
    # a data link, a venv or scratch folder linked in: no code that runs is in them; only the
    # code's own folders (project_code) hold links to judge, and a link to a folder is listed
    (repo / "src" / "b.py").write_text("B = 1\n")
    for name in ("mydata", ".venv", "runs"):
        (repo / name).symlink_to(tmp_path)
    with pytest.raises(CheckoutRefused, match=r"^\.venv: a link to"):
        _stored_diff(repo, tmp_path)  # the package runs from elsewhere: no code named, every link judged
    monkeypatch.setattr("sacscale.pipeline.code_content.project_code", lambda top: [b"src"])
    info = write_source_diff(git_state(repo), tmp_path / "source.diff")
    assert info["untracked_files"] == ["src/b.py"]
    assert [(e["path"], e["why"]) for e in info["untracked_not_stored"]] == [
        (name, f"a link to the folder {tmp_path}, not stored") for name in (".venv", "mydata", "runs")]
    (repo / "src" / "data").symlink_to(tmp_path)
    with pytest.raises(CheckoutRefused, match=r"^src/data: a link to"):
        write_source_diff(git_state(repo), tmp_path / "source.diff")
