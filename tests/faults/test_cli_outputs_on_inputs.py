"""No command writes an output over one of its inputs, by any spelling (links, `..`):
`report --output-html s.json --summary s.json` left the summary an HTML page and
`--output-html rep/figures/scaling_bars.png` a figure that was a page, both exit 0."""

import shutil
from pathlib import Path

import pytest

from one_line_cli import run

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "results" / "h200x1_shared_short"


@pytest.fixture
def inputs(tmp_path):
    shutil.copy(RESULTS / "summary.json", tmp_path / "s.json")
    (tmp_path / "rep" / "figures").mkdir(parents=True)
    (tmp_path / "rep" / "figures" / "scaling_bars.png").write_bytes(b"\x89PNG figure")
    (tmp_path / "link.json").symlink_to(tmp_path / "s.json")
    return tmp_path


def _report(capsys, tmp_path, html, *more):
    return run(capsys, "report", "--summary", tmp_path / "s.json",
               "--metrics", *sorted((RESULTS / "metrics").glob("*.json")),
               "--output-md", tmp_path / "rep" / "report.md", "--output-html", html,
               "--figures-dir", tmp_path / "rep" / "figures", *more)


@pytest.mark.parametrize("spelling", ["s.json", "link.json", "rep/../s.json"])
def test_report_does_not_write_over_its_summary(capsys, inputs, spelling):
    before = (inputs / "s.json").read_bytes()
    code, err = _report(capsys, inputs, inputs / spelling)
    assert code == 2 and "--output-html" in err and "is the --summary" in err and "an input" in err
    assert (inputs / "s.json").read_bytes() == before and not (inputs / "rep" / "report.md").exists()


def test_report_does_not_write_over_another_input(capsys, inputs):
    shutil.copy(RESULTS / "environment.json", inputs / "env.json")
    code, err = _report(capsys, inputs, inputs / "env.json", "--environment", inputs / "env.json")
    assert code == 2 and "is the --environment" in err


def test_report_does_not_write_into_its_figures(capsys, inputs):
    figure = inputs / "rep" / "figures" / "scaling_bars.png"
    code, err = _report(capsys, inputs, figure)
    assert code == 2 and f"--output-html {figure}: inside" in err
    assert figure.read_bytes() == b"\x89PNG figure"


def test_verify_env_does_not_write_over_its_plan(capsys, tmp_path):
    plan = tmp_path / "plan.json"
    shutil.copy(RESULTS / "plan.json", plan)
    code, err = run(capsys, "verify-env", "--plan", plan, "--output", tmp_path / "x" / ".." / "plan.json")
    assert code == 2 and "is the --plan" in err and plan.read_bytes() == (RESULTS / "plan.json").read_bytes()


def test_evaluate_does_not_write_over_its_model(capsys, tmp_path):
    model = tmp_path / "model.xml"
    model.write_text("<mujoco/>")
    code, err = run(capsys, "evaluate", tmp_path / "final.pt", "--model", model, "--output", model)
    assert code == 2 and "is the --model" in err and model.read_text() == "<mujoco/>"
