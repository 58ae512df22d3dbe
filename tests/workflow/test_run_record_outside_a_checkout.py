"""A run recorded by code that is not in a git checkout (a copy installed from an archive):
run.json still holds `code.commit` and `code.dirty` (null), which verify requires of every
run of a set made by this code; before, both keys were left out and such a set could not
verify."""

from sacscale.evidence.required_fields import REQUIRED, RUN
from sacscale.pipeline import run_record


def test_code_state_outside_a_checkout_names_commit_and_dirty_as_null(monkeypatch):
    monkeypatch.setattr(run_record, "code_state", lambda _: {"repository": False})
    state = run_record._code_state()
    assert state == {"commit": None, "dirty": None}
    assert {"code.commit", "code.dirty"} <= set(REQUIRED[RUN])


def test_code_state_keeps_an_error_git_gave(monkeypatch):
    monkeypatch.setattr(run_record, "code_state", lambda _: {"error": "git: not found"})
    assert run_record._code_state() == {"commit": None, "dirty": None, "error": "git: not found"}
