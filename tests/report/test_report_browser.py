"""The report as a reader sees it: `report.html` opened in headless Chromium (Debian
package `chromium`) shows no console errors, every image loads (naturalWidth > 0; the
figures are files linked from figures/, not embedded), and its visible text carries no
Markdown source (`**`, backticks, `|---|` rules, leading `#`). The one-line verdict is
on the first screen. A screenshot of the first screen is kept under the test's tmp dir
(its path is printed).

Reports built with `sacscale report` exactly as the workflow's report rule calls it: a
CPU-shaped run set (1 and 2 CPU ranks, 2 repeats, evaluations) from synthetic event
files, the committed GPU run set results/h200x2 (real figures), built into tmp, and a
set whose names and records carry markup (tests/report/hostile_names.py) beside its
plain twin: the same elements, the names shown as text, no script run.

Without a browser the tests skip, saying so; with SACSCALE_REQUIRE_BROWSER=1 (CI) they fail.
"""

import json
import re
import os
import subprocess
import sys
from pathlib import Path

import pytest

import hostile_names
from report_browser import PageReport, find_browser, inspect_page
from sacscale.analysis.aggregate import summarize
from sacscale.analysis.metrics import analyze_run
from synthetic_runs import linear_points, write_run

REPO = Path(__file__).resolve().parents[2]
SACSCALE = [sys.executable, "-m", "sacscale.cli"]


@pytest.fixture(scope="module")
def browser():
    path = find_browser()
    missing = None
    if path is None:
        missing = "chromium is not installed (Debian: apt-get install -y chromium)"
    else:
        try:
            import websocket  # noqa: F401  (websocket-client, a dependency in pyproject.toml)
        except ImportError:
            missing = "the websocket-client package is not installed (pip install -e .)"
    if missing:
        if os.environ.get("SACSCALE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"SACSCALE_REQUIRE_BROWSER=1 but {missing}")
        pytest.skip(f"{missing}; set SACSCALE_REQUIRE_BROWSER=1 to make this a failure")
    return path


def _report(out: Path, summary: Path, metrics: list[Path], run_dirs: list[Path], extra: list[str]) -> Path:
    cmd = [*SACSCALE, "report", "--summary", str(summary), "--metrics", *map(str, metrics),
           "--output-md", str(out / "report.md"), "--output-html", str(out / "report.html"),
           "--figures-dir", str(out / "figures"), "--run-dirs", *map(str, run_dirs),
           "--deviations", str(REPO / "docs" / "deviations.md"), *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out / "report.html"


def _evaluation(env_steps: int, lin: float) -> dict:
    """The fields of a `sacscale evaluate` output that the report reads."""
    still = {"normalised_tracking": {"lin_vel_xy": 0.45, "yaw_rate": 0.6},
             "rms_error": {"lin_vel_xy": 0.5, "yaw_rate": 0.3}, "fall_rate": 0.0}
    return {"env_steps": env_steps,
            "protocol": {"envs_per_command": 1, "commands": [[0.5, 0, 0], [0, 0, 0.5]], "seconds": 2.0,
                         "settle_s": 1.0},
            "overall": {"normalised_tracking": {"lin_vel_xy": lin, "yaw_rate": 0.7},
                        "rms_error": {"lin_vel_xy": 0.4, "yaw_rate": 0.25}, "fall_rate": 0.5},
            "baseline_stand_still": {"overall": still},
            "ratio_to_stand_still": {"lin_vel_xy": 0.8, "yaw_rate": 0.83}}


def cpu_run_set(root: Path) -> tuple[Path, list[Path], list[Path], list[str]]:
    """A CPU-preset-shaped set: n1_cpu and n2_cpu alternating over 2 repeats, untraced,
    short runs (4 logged points), each with an episode return and an evaluation."""
    metrics, run_dirs, evals = [], [], []
    for repeat in (1, 2):
        for config, ranks, rate in (("n1_cpu", 1, 300.0), ("n2_cpu", 2, 420.0 + 40 * repeat)):
            name = f"cpu_r{repeat}_{config}"
            total = linear_points(4, rate, 1.0)
            run = write_run(root / "runs" / name, total, ranks=ranks,
                            returns=[(4, 1003.0, 1.5 + repeat)], lengths=[(4, 1003.0, 30.0)],
                            run_json={"status": "completed", "exit_status": 0, "duration_s": 9.0,
                                      "resolved_config": {"run": name, "config": config, "repeat": repeat,
                                                          "devices": ",".join(["cpu"] * ranks),
                                                          "world_size": ranks}})
            m = analyze_run(run)
            path = root / "metrics" / f"{name}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(m))
            metrics.append(m)
            run_dirs.append(run)
            e = root / "eval" / f"{name}.json"
            e.parent.mkdir(exist_ok=True)
            e.write_text(json.dumps(_evaluation(int(total[-1][2] / ranks), 0.5 + 0.1 * ranks)))
            evals.append(str(e))
    plan = {"run_set": "cpu", "preset": "cpu", "preset_reason": "preset auto: no CUDA device visible",
            "repeats": 2, "iterations": 24,
            "description": "Any machine without CUDA: 1 and 2 CPU ranks (gloo). Throughput figures from it say "
                           "nothing about the GPU system."}
    summary = summarize(metrics, ["n1_cpu", "n2_cpu"], meta={"run_set": "cpu"})
    (root / "summary.json").write_text(json.dumps(summary))
    (root / "environment.json").write_text(json.dumps({"plan": plan, "versions": {"torch": "2.13.0"}}))
    (root / "correctness.json").write_text(json.dumps({"pass": True, "world_size": 2, "backend": "gloo"}))
    extra = ["--environment", str(root / "environment.json"), "--correctness", str(root / "correctness.json"),
             "--evaluations", *evals]
    return root / "summary.json", [root / "metrics" / f"{m['run']}.json" for m in metrics], run_dirs, extra


def gpu_run_set(name: str) -> tuple[Path, list[Path], list[Path], list[str]]:
    """A committed pipeline run set, read in place (never written)."""
    root = REPO / "results" / name
    runs = [r["name"] for r in json.loads((root / "plan.json").read_text())["runs"]]
    extra = []
    for flag, file in (("--environment", "environment.json"), ("--model", "model.json"),
                       ("--correctness", "correctness.json"), ("--verification", "verify.json"),
                       ("--manifest-json", "manifest.json")):
        extra += [flag, str(root / file)]
    return (root / "summary.json", [root / "metrics" / f"{r}.json" for r in runs], [root / "runs" / r for r in runs],
            extra)


def problems(page: PageReport, min_images: int, markdown: bool = True) -> list[str]:
    """What a reader would find wrong; `markdown=False` leaves out the raw-Markdown check
    (for a page whose names carry backticks of their own)."""
    out = [f"console: {e}" for e in page.console_errors]
    out += [f"image does not load: {i}" for i in page.broken_images]
    out += [f"image embedded, not linked: {i['alt']}" for i in page.images if i["src"].startswith("data:")]
    if len(page.images) < min_images:
        out.append(f"{len(page.images)} images, expected at least {min_images}")
    if not markdown:
        return out
    out += [f"raw Markdown ({marker}) in the visible text: {lines[:3]}"
            for marker, lines in page.raw_markdown().items()]
    return out


def _keep_screenshot(page: PageReport, path: Path) -> None:
    path.write_bytes(page.screenshot)
    print(f"first screen: {path}")
    assert page.screenshot[:8] == b"\x89PNG\r\n\x1a\n"


def test_cpu_report_in_browser(browser, tmp_path):
    html = _report(tmp_path / "reports" / "cpu", *cpu_run_set(tmp_path / "results" / "cpu"))
    page = inspect_page(html, tmp_path / "profile", browser)
    # untraced: the per-phase figure is left out, so 5 figures
    assert problems(page, min_images=5) == []
    # the one-line verdict on the first screen: what a CPU set can and cannot show
    assert page.first_screen.startswith("sacscale run set cpu\nAt a glance: a CPU smoke set. The pipeline ran "
                                        "(4 runs) and the correctness probe passed; the throughput of CPU ranks is "
                                        "not meaningful"), page.first_screen[:400]
    first = page.text[:1500]
    assert "too few repeats to support a conclusion" in first and "95% CI" not in first
    assert "Learning: " in first and "standing still" in first
    assert "RTX 5090" not in page.text.split("Deviations from the reference system")[0].replace(
        "2x RTX 5090 server", "")  # the seed's table only for GPU presets; the seed named once in the claim
    assert "No per-phase figure: the runs were not traced" in page.text
    assert "shared/docs" not in page.text  # nothing the reader of the report cannot open
    assert re.search(r"Deviations from the reference system\s+This project's deviations", page.text)  # linked
    _keep_screenshot(page, tmp_path / "cpu_first_screen.png")


def test_gpu_report_in_browser(browser, tmp_path):
    html = _report(tmp_path / "reports" / "h200x2", *gpu_run_set("h200x2"))
    page = inspect_page(html, tmp_path / "profile", browser)
    assert problems(page, min_images=6) == []
    assert "Against the seed" in page.text and "n2_pool / n1_local (n=3/3)" in page.text
    assert page.first_screen.split("\n")[1].startswith("At a glance: the claim, more env steps/s on more GPUs: "
                                                        "n2_pool / n1_local = 1.804x")
    _keep_screenshot(page, tmp_path / "h200x2_first_screen.png")


def _named_report(root: Path, hostile: bool, browser: str) -> PageReport:
    """The set of hostile_names, plain or with markup in its names, as a reader sees it."""
    inputs = hostile_names.run_set(root / "results", hostile)
    extra = ["--environment", str(inputs["environment"]), "--correctness", str(inputs["probe"]),
             "--model", str(inputs["model"]), "--attempts-dir", str(inputs["attempts_dir"])]
    html = _report(root / "reports", inputs["summary_path"], inputs["metrics_paths"], inputs["run_dirs"], extra)
    return inspect_page(html, root / "profile", browser)


def test_markup_in_names_neither_runs_nor_renders(browser, tmp_path):
    plain = _named_report(tmp_path / "plain", False, browser)
    hostile = _named_report(tmp_path / "hostile", True, browser)
    assert problems(plain, min_images=5) == []
    assert problems(hostile, min_images=5, markdown=False) == []  # no dialog: no onerror ran
    assert hostile.tags == plain.tags  # not one element more or less from the names
    for value in hostile_names.names(True).values():
        assert value in hostile.text, value
    _keep_screenshot(hostile, tmp_path / "hostile_first_screen.png")


def test_checks_catch_a_bad_page(browser, tmp_path):
    """The checks can fail: raw Markdown, a missing image and a console error are all found."""
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><body><pre>## Deviations\n\n**bold** and `code`\n\n| a |\n|---|\n</pre>"
                   '<img src="missing.png" alt="missing"><script>console.error("boom")</script>'
                   '<img src="x" alt="x" onerror="alert(1)"></body></html>')
    page = inspect_page(bad, tmp_path / "profile", browser)
    found = problems(page, min_images=1)
    assert any("boom" in p for p in found), found
    assert any("image does not load" in p for p in found), found
    assert any(p.startswith("console: dialog (alert): 1") for p in found), found  # a script that ran
    assert set(page.raw_markdown()) == {"bold markers **", "backtick", "table rule |---|",
                                        "heading marker # at a line start"}
