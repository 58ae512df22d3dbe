"""The Environment list's commit line says "(clean)" only of a checkout's commit whose
record says it did not differ; code from outside any checkout is not identified by a
commit, whatever commit its record carries."""

from sacscale.report.code_line import commit_line

COMMIT = "881e5c75bedf4c78f73efe3bce235ce4e39aca7f"


def test_a_clean_checkout_is_clean():
    assert commit_line({"repository": True, "commit": COMMIT, "dirty": False}) == f"`{COMMIT}` (clean)"


def test_code_outside_any_checkout_is_not_identified_by_a_commit_it_carries():
    line = commit_line({"repository": False, "commit": COMMIT, "dirty": False, "error": "fatal: not a git repository"})
    assert line == "none: the code is not identified by a commit (fatal: not a git repository)"


def test_no_commit_is_no_commit():
    assert commit_line({"repository": None, "error": "git is not installed"}) == \
        "none: the code is not identified by a commit (git is not installed)"
    assert commit_line({"repository": True, "commit": None, "dirty": False}) == \
        "none: the code is not identified by a commit (the checkout recorded no commit)"


def test_an_unrecorded_dirty_flag_is_not_clean():
    assert commit_line({"repository": True, "commit": COMMIT, "dirty": None}) == \
        f"`{COMMIT}` (whether it differed from the commit: not recorded)"


def test_a_dirty_checkout_shows_its_diff():
    line = commit_line({"repository": True, "commit": COMMIT, "dirty": True,
                        "diff": {"file": "source.diff", "bytes": 1234, "sha256": "ab" * 32}})
    assert line.startswith(f"`{COMMIT}` (uncommitted changes) plus the stored diff (`source.diff`, 1,234 bytes")


def test_what_the_diff_lists_but_does_not_store_is_counted_by_kind():
    listed = [{"path": "big.bin", "bytes": 10**6, "sha256": "cd" * 32},
              {"path": "vendor/lib/", "why": "a git repository of its own, not a submodule: its files are not stored"},
              {"path": ".venv", "why": "a link to the folder /opt/venv, not stored"}]
    diff = {"file": "source.diff", "bytes": 1, "sha256": "ab" * 32, "untracked_not_stored": listed}
    line = commit_line({"repository": True, "commit": COMMIT, "dirty": True, "diff": diff})
    assert line.endswith("; 1 large untracked file(s) listed in the record by size and SHA-256, not stored"
                         "; 1 nested git repository listed in the record, not stored"
                         "; 1 link(s) to folders outside the code listed in the record, not stored")
