"""A set's evaluations removed (and plan.json's evaluation.enabled set to false in plan.json
and environment.json, so that nothing requires them): verify passed, while evidence.json still
said `eval/<run>.json records its hash` of each left-out policy, which then nothing bound. A
left-out entry that cites its run's evaluation requires that evaluation."""

import json
import shutil
from pathlib import Path

import pytest

from sacscale.evidence import manifest, scope
from sacscale.evidence.verify import verify

REPO = Path(__file__).resolve().parents[2]
SET = "h200x1_shared_short"  # a set of the budget's format, three policies left out, each evaluated
RUN = "shared_r1_n2_shared"
POLICY = f"runs/{RUN}/checkpoints/final.pt"


@pytest.fixture
def work(tmp_path):
    """The set without its report (verify --report-pending), whose evaluation tables would
    otherwise name the removal."""
    shutil.copytree(REPO / "results" / SET, tmp_path / "results" / SET)
    return tmp_path / "results" / SET


def _evaluation_off(work):
    for name, edit in (("plan.json", lambda d: d), ("environment.json", lambda d: d["plan"])):
        path = work / name
        data = json.loads(path.read_text())
        edit(data).setdefault("evaluation", {})["enabled"] = False
        path.write_text(json.dumps(data, indent=1))


def test_the_committed_set_cites_evaluations_it_holds():
    problems, _ = scope.check_scope(REPO / "results" / SET)
    assert problems == []


def test_a_removed_evaluation_a_left_out_policy_cites_fails_verify(work):
    shutil.rmtree(work / "eval")
    _evaluation_off(work)
    manifest.write(work)
    problems = verify(work, report_pending=True).problems()
    left_out = [entry["path"] for entry in json.loads((work / "evidence.json").read_text())["left_out"]]
    assert POLICY in left_out and len(left_out) == 3
    assert problems == [f"scope: evidence.json: {path} is listed as left out because eval/{path.split('/')[1]}.json "
                        f"records its hash, but the set has no eval/{path.split('/')[1]}.json: the evaluation that "
                        "binds the policy was removed" for path in left_out], problems


def test_an_entry_citing_another_runs_evaluation_is_named(work):
    path = work / "evidence.json"
    data = json.loads(path.read_text())
    entry = next(e for e in data["left_out"] if e["path"] == POLICY)
    entry["why"] = entry["why"].replace(f"eval/{RUN}.json", "eval/shared_r2_n1_pool7.json")
    path.write_text(json.dumps(data))
    problems, _ = scope.check_scope(work)
    assert problems == [f"evidence.json: {POLICY} is listed as left out because eval/shared_r2_n1_pool7.json "
                        f"records its hash, the evaluation of another run than {RUN}"], problems
