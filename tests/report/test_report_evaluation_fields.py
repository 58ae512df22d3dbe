"""Every field the report reads of an evaluation record is either required by the shape it
checks at reading (one line naming the file and the field, exit 2) or read as optional and
shown as absent. An evaluation without ratio_to_stand_still or protocol.settle_s ended the
report in a worded KeyError naming no file (exit 1), or rendered; a null normalised_tracking
or rms_error ended it in an AttributeError or TypeError."""

import sys
from pathlib import Path

import pytest

from sacscale.cli import main
from sacscale.report.build import EVALUATION_SHAPE
from sacscale.report.tables import quality_table
from sacscale.report.verdict import learning_line
from sacscale.shapes import record_problem

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "evidence"))
from set_copies import copy_committed_set, edit_record  # noqa: E402

SET = "h200x1_shared_short"
RUN = "shared_r1_n1_pool7"

_REQUIRED = {
    "ratio_to_stand_still": (lambda e: e.pop("ratio_to_stand_still"), "'ratio_to_stand_still' is missing"),
    "rms_error": (lambda e: e["overall"].pop("rms_error"), "'overall.rms_error' is missing"),
    "rms_error_null": (lambda e: e["overall"].update(rms_error=None), "'overall.rms_error' is NoneType, not an object"),
    "protocol": (lambda e: e.pop("protocol"), "'protocol' is missing"),
    "settle_s": (lambda e: e["protocol"].pop("settle_s"), "'protocol.settle_s' is missing"),
    "seconds": (lambda e: e["protocol"].update(seconds="20"), "'protocol.seconds' is str"),
    "envs_per_command": (lambda e: e["protocol"].pop("envs_per_command"), "'protocol.envs_per_command' is missing"),
    "commands": (lambda e: e["protocol"].update(commands=None), "'protocol.commands' is NoneType"),
    "baseline": (lambda e: e.update(baseline_stand_still=[]), "'baseline_stand_still' is list, not an object"),
}


@pytest.mark.parametrize("edit, problem", _REQUIRED.values(), ids=_REQUIRED.keys())
def test_an_evaluation_lacking_a_field_the_report_reads_is_named_with_its_file(tmp_path, capsys, edit, problem):
    root = copy_committed_set(tmp_path, SET)
    edit_record(root, f"eval/{RUN}.json", edit)
    out = tmp_path / "out"
    assert main(["report", "--run-set", str(root), "--output-dir", str(out)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"sacscale report: error: {root / 'eval' / f'{RUN}.json'}: not a record this pipeline wrote (its {problem})")
    assert not out.exists()


def _evaluation(**overall) -> dict:
    """The fields `sacscale evaluate` always writes that the report reads, `overall` changed."""
    return {"env_steps": 100,
            "protocol": {"envs_per_command": 8, "commands": [[0, 0, 0]], "seconds": 20.0, "settle_s": 1.0},
            "overall": {"rms_error": {"lin_vel_xy": 0.2, "yaw_rate": 0.1}, "fall_rate": 0.5,
                        "normalised_tracking": {"lin_vel_xy": 0.9, "yaw_rate": 0.8}, **overall},
            "baseline_stand_still": {"overall": {"normalised_tracking": {"lin_vel_xy": 0.4, "yaw_rate": 0.5}}},
            "ratio_to_stand_still": {"lin_vel_xy": 0.5, "yaw_rate": 0.25}}


_OPTIONAL = {
    "tracking_null": _evaluation(normalised_tracking=None),
    "tracking_absent": {**_evaluation(), "overall": {"rms_error": {}, "fall_rate": 0.5}},
    "figures_null": {**_evaluation(rms_error={"lin_vel_xy": None, "yaw_rate": None}), "ratio_to_stand_still": {}},
    "baseline_overall_null": {**_evaluation(), "baseline_stand_still": {"overall": None}},
    "baseline_absent": {k: v for k, v in _evaluation().items() if k != "baseline_stand_still"},
}


@pytest.mark.parametrize("evaluation", _OPTIONAL.values(), ids=_OPTIONAL.keys())
def test_an_optional_field_the_shape_allows_absent_is_shown_absent(evaluation):
    assert record_problem(evaluation, EVALUATION_SHAPE) is None
    metrics = [{"run": "r1_a", "config": "a"}]
    row, = quality_table({"r1_a": evaluation}, metrics).rows
    line = learning_line({"r1_a": evaluation}, metrics)
    kernels = evaluation["overall"].get("normalised_tracking")
    assert row[8:] == (["0.900", "0.800"] if kernels else ["n/a", "n/a"])
    if not any(evaluation["overall"]["rms_error"].values()):
        assert row[3] == row[5] == "n/a"
    if not evaluation["ratio_to_stand_still"]:
        assert row[4] == row[6] == "n/a"
    still = (evaluation.get("baseline_stand_still") or {}).get("overall")
    judged = ("`a` (1 run(s)): normalised tracking 0.90 planar velocity, 0.80 yaw rate (standing still 0.40, "
              "0.50; 1 = perfect), 0.50 falls per episode: tracks better than standing still.")
    assert line == (judged if kernels and still else "`a`: tracking not recorded.")
