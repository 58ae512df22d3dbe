"""The report: seed-shaped table, statistics, figures, sections; Markdown and HTML agree."""

import json

from sacscale.analysis.aggregate import summarize
from sacscale.analysis.metrics import analyze_run
from sacscale.report.build import write_report
from sacscale.report.plots import FIGURES
from synthetic_runs import simple_run, write_run, linear_points


def _run_set(tmp_path, configs):
    metrics = []
    for repeat in (1, 2):
        for config, rate, ranks in configs:
            run = simple_run(tmp_path / "runs" / f"p_r{repeat}_{config}", config, repeat, rate * (1 + 0.05 * repeat), ranks)
            metrics.append(analyze_run(run))
    paths = []
    for m in metrics:
        p = tmp_path / "metrics" / f"{m['run']}.json"
        p.parent.mkdir(exist_ok=True)
        p.write_text(json.dumps(m))
        paths.append(p)
    summary = summarize(metrics, [c for c, _, _ in configs], meta={"run_set": "S"})
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    env = {"plan": {"run_set": "S", "preset": "h200x2", "preset_reason": "named in the config", "repeats": 2,
                    "iterations": 10},
           "versions": {"torch": "2.x"}, "torch": {"gpus": [{"name": "GPU-A", "memory_mib": 1000}]},
           "learner": {"file": "src/sacscale/learn/learner.py", "graph_hooks": True},
           "cpu": {"model": "Some CPU", "layout": "CPU CORE SOCKET NODE\n0 0 0 0"}}
    (tmp_path / "environment.json").write_text(json.dumps(env))
    (tmp_path / "correctness.json").write_text(json.dumps({
        "pass": True, "backend": "gloo", "tolerance": {"grad_rel": 1e-4},
        "comparisons": [{"tensor": "param/actor", "max_rel_diff": 1e-6, "pass": True}]}))
    (tmp_path / "deviations.md").write_text("# Deviations\n\n- physics substeps differ\n")
    return paths


def _write(tmp_path, paths):
    out = tmp_path / "reports" / "S"
    write_report(tmp_path / "summary.json", paths, out / "report.md", out / "report.html", out / "figures",
                 environment=tmp_path / "environment.json", probe=tmp_path / "correctness.json",
                 deviations=tmp_path / "deviations.md")
    return out, (out / "report.md").read_text(), (out / "report.html").read_text()


def test_gpu_scaling_report(tmp_path):
    paths = _run_set(tmp_path, [("n1_local", 1000.0, 1), ("n2_pool", 2000.0, 2)])
    out, md, html = _write(tmp_path, paths)
    assert "| configuration | 1-GPU steps/s | 2-GPU steps/s | ratio of means |" in md
    assert "| n1_local / n2_pool (n=2/2) |" in md and "2.000x" in md
    assert "r1: 1,050, r2: 1,100" in md  # per-repeat values
    for section in ("## Environment", "## Correctness probe", "## Metric definitions", "## Limitations",
                    "## Deviations from the reference system", "physics substeps differ", "Weak scaling",
                    "Verdict: PASS", "graph hooks: true", "GPU-A", "backend: gloo",
                    '| tensor | max_rel_diff | pass |', "| param/actor | 1e-06 | True |"):
        assert section in md
    for name in FIGURES.values():
        assert (out / "figures" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "![cumulative steps](figures/cumulative_steps.png)" in md
    assert "No per-phase plot" in md
    assert "data:image/png;base64," in html and "<table>" in html and "2.000x" in html


def test_single_gpu_preset_compares_configs_as_listed(tmp_path):
    paths = _run_set(tmp_path, [("n1_pool7", 700.0, 1), ("n1_pool15", 1400.0, 1)])
    _, md, _ = _write(tmp_path, paths)
    assert "baseline (1-GPU) steps/s | compared (1-GPU) steps/s" in md
    assert "compared as listed" in md and "not a GPU-scaling figure" in md


def test_phase_plot_when_traced(tmp_path):
    run = write_run(tmp_path / "runs" / "p_r1_n1", linear_points(8, 10.0, 1.0),
                    time_tags={"Time/learner_update_ms": linear_points(8, 1.0, 1.0)},
                    run_json={"resolved_config": {"config": "n1", "repeat": 1, "devices": "0", "world_size": 1}})
    m = analyze_run(run)
    (tmp_path / "m.json").write_text(json.dumps(m))
    (tmp_path / "summary.json").write_text(json.dumps(summarize([m], ["n1"])))
    out = tmp_path / "rep"
    write_report(tmp_path / "summary.json", [tmp_path / "m.json"], out / "r.md", out / "r.html", out / "figures")
    md = (out / "r.md").read_text()
    assert "![phase times](figures/phase_times.png)" in md
    assert "only one configuration" in md
