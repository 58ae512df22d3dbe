"""In a set made by this code every field this code writes and a derivation reads is there:
one deleted (the derivation beside it skipped) is a record problem naming the file and the
field, where an older set keeps its note. The list (sacscale.evidence.required_fields)
names every key of the current records this code writes, as required or not."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from set_copies import copy_committed_set, current_copy, edit_record as _edit, remake_manifest

from sacscale.evidence.required_fields import EVAL, META, NOT_REQUIRED, REFERENCE_META, REQUIRED, RUN, SINCE
from sacscale.evidence.verify import verify

REPO = Path(__file__).resolve().parents[2]
SET = "h200x1_shared_short"
RUN_NAME = "shared_r1_n2_shared"
WHY = "absent, but this code writes it (a set made by this code, evidence format 2)"


def _delete(*keys, **values):
    def edit(record):
        for key in keys:
            *parents, last = key.split(".")
            inner = record
            for parent in parents:
                inner = inner[parent]
            del inner[last]
        record.update(values)
    return edit


@pytest.fixture
def current(tmp_path):
    return current_copy(tmp_path, SET)


def _forged(root, rel, edit):
    _edit(root, rel, edit)
    remake_manifest(root)
    return verify(root, report_pending=True).records


@pytest.mark.parametrize("rel, edit, absent", [
    # the counters the page's end-of-run line shows (from the events, by rank)
    (f"runs/{RUN_NAME}/train_meta.json", _delete("nonfinite_targets", "nonfinite_rows_by_rank"),
     ["nonfinite_targets", "nonfinite_rows_by_rank"]),
    # 7 transitions dropped, which the events do not give
    (f"runs/{RUN_NAME}/train_meta.json", _delete("nonfinite_rows_by_rank", nonfinite_rows=7),
     ["nonfinite_rows_by_rank"]),
    # the ranks of a synced run said to differ
    (f"runs/{RUN_NAME}/train_meta.json", _delete("final_learner_state_sha256_by_rank", ranks_identical=False),
     ["final_learner_state_sha256_by_rank"]),
    (f"runs/{RUN_NAME}/train_meta.json", _delete("losses_compiled"), ["losses_compiled"]),
    (f"runs/{RUN_NAME}/train_meta.json", _delete("collector_pools.how"), ["collector_pools.how"]),
    (f"runs/{RUN_NAME}/run.json", _delete("env_set", "log_dir_while_running"), ["env_set", "log_dir_while_running"]),
    (f"eval/{RUN_NAME}.json", _delete("protocol.tilt_obs"), ["protocol.tilt_obs"]),
    (f"eval/{RUN_NAME}.json", _delete("per_command"), ["per_command"]),
])
def test_a_field_deleted_from_a_current_set_is_named(current, rel, edit, absent):
    records = _forged(current, rel, edit)
    for path in absent:
        assert f"{rel}: {path}: {WHY}" in records, records


def test_a_run_started_since_a_field_was_written_needs_it(tmp_path):
    # the set made by this code whose runs started after the trainer counted non-finite
    # targets by source; h200x1_shared_short's started before, and verify as they are
    root = copy_committed_set(tmp_path, "h200x1_shared_recheck")
    rel = "runs/shared_r1_n1_pool7/train_meta.json"
    assert f"{rel}: nonfinite_target_sources: {WHY}" in _forged(root, rel, _delete("nonfinite_target_sources"))


def test_an_older_set_keeps_its_notes(tmp_path):
    # no evidence.json: a set made before this evidence format; absent fields are not required
    root = copy_committed_set(tmp_path, "h200x1_final")
    rel = next(iter(sorted(root.glob("runs/*/run.json")))).relative_to(root).as_posix()
    assert not [p for p in _forged(root, rel, _delete("log_dir_while_running")) if "absent, but" in p]


def test_verify_names_its_notes_by_what_they_are(current):
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", "verify", str(current), "--report-pending"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert "older set" not in last and re.search(r"; \d+ note\(s\) \(--notes lists them\)$", last), last


# --- the list against the records this code writes ----------------------------------------------

def _key_paths(value, prefix=""):
    """Every dict key path of a record, down to a value that is not a non-empty object."""
    if isinstance(value, dict) and value:
        for key, sub in value.items():
            yield from _key_paths(sub, f"{prefix}.{key}" if prefix else key)
    else:
        yield prefix


def _named(path: str, listed: set[str]) -> bool:
    return any(path == name or path.startswith(f"{name}.") for name in listed)


def _listed(kind: str) -> set[str]:
    return {*REQUIRED[kind], *SINCE.get(kind, {}), *NOT_REQUIRED.get(kind, {})}


@pytest.fixture(scope="module")
def current_sets(tmp_path_factory):
    made = current_copy(tmp_path_factory.mktemp("made_current"), SET)
    return [REPO / "results" / "h200x1_shared_recheck", made]


@pytest.mark.parametrize("kind", [RUN, META, EVAL])
def test_every_key_this_code_writes_is_listed_and_every_listed_key_written(current_sets, kind):
    walked = {path for root in current_sets for f in root.glob(kind.replace("<run>", "*"))
              for path in _key_paths(json.loads(f.read_text()))}
    listed = _listed(kind)
    assert sorted(p for p in walked if not _named(p, listed)) == []  # a new field: required, or why not
    assert sorted(n for n in listed if not any(p == n or p.startswith(f"{n}.") for p in walked)) == []
    assert not set(REQUIRED[kind]) & (set(SINCE.get(kind, {})) | set(NOT_REQUIRED.get(kind, {})))


def test_the_reference_trainers_record_holds_what_is_required_of_it():
    for f in (REPO / "results" / "h200x1_ref").glob("runs/*_ref_*/train_meta.json"):
        assert [k for k in REFERENCE_META if k not in json.loads(f.read_text())] == [], f
