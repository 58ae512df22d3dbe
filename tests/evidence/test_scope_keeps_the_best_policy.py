"""The best run's policy stays in the set: the report's video and its "the best of N
evaluated runs" rest on it, and the pipeline (`manifest --scope --keep-best`) always keeps
it. Listed in evidence.json's left_out (with its true hash) and taken out, with the manifest,
the page and verify.json made again, it passed verify before this was checked."""

import json
import shutil

from set_copies import current_copy, made_current

from sacscale.evidence.manifest import sha256_file
from sacscale.evidence.verify import verify

SET = "h200x1_shared_short"
BEST = "shared_r1_n1_pool7"  # best_run.json's run and the evaluations' best


def leave_out(root, run, tmp_path) -> str:
    rel = f"runs/{run}/checkpoints/final.pt"
    policy = root / rel
    entry = {"path": rel, "sha256": sha256_file(policy), "bytes": policy.stat().st_size,
             "moved_to": str(tmp_path / "moved"), "why": "the policy of a run no claim rests on (a throughput run)"}
    shutil.move(policy, tmp_path / "moved")
    scope = json.loads((root / "evidence.json").read_text())
    scope["left_out"].append(entry)
    (root / "evidence.json").write_text(json.dumps(scope))
    checked = json.loads((root / "verify.json").read_text())
    checked["files_checked"] -= 1  # the recorded verification of the set without it
    (root / "verify.json").write_text(json.dumps(checked))
    made_current(root)  # the manifest and the page made again
    return rel


def test_the_best_runs_policy_left_out_is_named(tmp_path):
    root = current_copy(tmp_path, SET)
    rel = leave_out(root, BEST, tmp_path)
    result = verify(root)
    assert [f"scope: evidence.json: {rel} is listed as left out, but {BEST} is the best of the set's evaluations "
            "(sacscale.eval.best): the set keeps the best run's policy (manifest --scope --keep-best)"] \
        == result.problems(), result.problems()
