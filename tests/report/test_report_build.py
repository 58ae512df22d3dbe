"""The report: the verdict first, the seed-shaped table (GPU sets), statistics, figures,
sections; the HTML is the Markdown rendered."""

import json

import pytest

from sacscale.analysis.aggregate import describe, summarize
from sacscale.analysis.metrics import analyze_run
from sacscale.report.build import write_report
from sacscale.report import plots
from sacscale.report.plots import FIGURES
from synthetic_runs import simple_run, write_run, linear_points


def _run_set(tmp_path, configs):
    metrics = []
    for repeat in (1, 2):
        for config, rate, ranks in configs:
            run = simple_run(tmp_path / "runs" / f"p_r{repeat}_{config}", config, repeat,
                             rate * (1 + 0.05 * repeat), ranks)
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
    # the row is labelled in the ratio's direction
    assert "| n2_pool / n1_local (n=2/2) | 1,075 ± 35 | 2,150 ± 71 | 2.000x |" in md
    assert "r1: 1,050, r2: 1,100" in md  # per-repeat values
    for section in ("## Environment", "## Correctness probe", "## Metric definitions", "## Limitations",
                    "## Deviations from the reference system", "Weak scaling",
                    "Verdict: PASS", "graph hooks: true", "GPU-A", "backend: gloo",
                    '| tensor | max_rel_diff | pass |', "| param/actor | 1e-06 | True |"):
        assert section in md
    for name in FIGURES.values():
        assert (out / "figures" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "![cumulative steps](figures/cumulative_steps.png)" in md
    assert "No per-phase figure: the runs were not traced" in md and "![phase times]" not in md
    assert "Per-phase time per iteration (ms)" not in md  # no phase table without traced runs
    # no run directories given: the figure left out, and the report says why
    assert "No learning curves: no run directories were given (sacscale report --run-dirs)." in md
    assert "![learning curves]" not in md
    # figures linked, not embedded: the page sits beside figures/
    assert "data:image" not in html and '<img alt="cumulative steps" src="figures/cumulative_steps.png"' in html
    assert "<table>" in html and "2.000x" in html
    # records not given leave their sections out (no model, evidence or video record here)
    assert "## Model" not in md and "## Evidence" not in md and "No model record" not in md

    # one line at a glance, then the verdict: the claim with the seed explained once, the ratio with n
    assert md.startswith("# sacscale run set S\n\n**At a glance:** the claim, more env steps/s on more GPUs: "
                         "`n2_pool` / `n1_local` = 2.000x (n = 2: too few repeats for a conclusion); the "
                         "correctness probe passed.\n\n## Verdict\n\n- Claim, from the seed: ")
    assert md.count("The seed is the original measurement") == 1
    verdict = md.split("## Verdict")[1].split("###")[0]
    # below 3 paired repeats no interval is printed, here or in the interval table
    assert ("`n2_pool` / `n1_local` = 2.000x, n = 2 paired repeat(s) "
            "(propagated std ±0.093): too few repeats to support a conclusion") in verdict
    assert "95% CI" not in verdict and "| n2_pool / n1_local | 2.000x | not shown (n < 3) | 2 |" in md
    assert "Per-rank efficiency: `n2_pool` 100% of 2x" in verdict
    assert "Correctness probe: PASS" in verdict and "Learning:" not in verdict  # no evaluations: no line
    # the seed's own figures, right after the verdict, for a GPU set
    assert md.index("## Verdict") < md.index("### Against the seed") < md.index("| in-graph grad sync + SHM") \
        < md.index("## Results")
    # deviations: linked (relative to the report), not copied
    assert "physics substeps differ" not in md
    assert '<a href="../../deviations.md">deviations.md</a>' in html
    assert "`" not in html.split("<title>")[1].split("</title>")[0]  # no literal backticks in titles


def test_cpu_report_has_no_seed_tables_and_explains_na(tmp_path):
    paths = _run_set(tmp_path, [("n1_cpu", 30.0, 1), ("n2_cpu", 40.0, 2)])
    summary = json.loads((tmp_path / "summary.json").read_text())
    for name, c in summary["configs"].items():  # CPU ranks
        c["devices"] = "cpu" if name == "n1_cpu" else "cpu,cpu"
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    env = json.loads((tmp_path / "environment.json").read_text())
    env["plan"].update(preset="cpu", description="1 and 2 CPU ranks. Throughput figures from it say nothing "
                                                 "about the GPU system.")
    (tmp_path / "environment.json").write_text(json.dumps(env))
    _, md, _ = _write(tmp_path, paths)
    assert "Against the seed" not in md and "RTX 5090" not in md.replace("2x RTX 5090 server", "")
    assert "| configuration | baseline" not in md  # no seed-shaped table
    assert md.count("say nothing about the GPU system") == 1  # one disclaimer, once
    assert "n/a where no episode ended within a logging interval" in md


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
    assert "| n1 | 0 | 1 | 6.500 |" in md  # rank 0 only: mean of steps 5..8


def _traced_run(tmp_path, config, repeat, ranks):
    """Rank r of repeat k logs constant phases: env step 2 + r + k, update 10 + 10 r + k (ms)."""
    total = linear_points(8, 10.0, 1.0)
    tags = {r: {"Time/collector_env_step_ms": [(s, t, 2.0 + r + repeat) for s, t, _ in total],
                "Time/learner_update_ms": [(s, t, 10.0 + 10.0 * r + repeat) for s, t, _ in total]}
            for r in range(ranks)}
    run = write_run(tmp_path / "runs" / f"p_r{repeat}_{config}", total, ranks=ranks, rank_time_tags=tags,
                    run_json={"resolved_config": {"config": config, "repeat": repeat,
                                                  "devices": ",".join(map(str, range(ranks))), "world_size": ranks}})
    return analyze_run(run)


def test_phase_plot_and_table_when_traced(tmp_path, monkeypatch):
    metrics = [_traced_run(tmp_path, config, repeat, ranks)
               for repeat in (1, 2) for config, ranks in (("n1", 1), ("n2_pool", 2))]
    paths = []
    for m in metrics:
        paths.append(tmp_path / f"{m['run']}.json")
        paths[-1].write_text(json.dumps(m))
    (tmp_path / "summary.json").write_text(json.dumps(summarize(metrics, ["n1", "n2_pool"])))

    labels = {}
    save = plots._save

    def capture(fig, path):
        if path.name == FIGURES["phase_times"]:
            labels["y"] = [t.get_text() for t in fig.axes[0].get_yticklabels()]
            labels["legend"] = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
        save(fig, path)

    monkeypatch.setattr(plots, "_save", capture)
    out = tmp_path / "rep"
    write_report(tmp_path / "summary.json", paths, out / "r.md", out / "r.html", out / "figures")
    md, html = (out / "r.md").read_text(), (out / "r.html").read_text()
    assert "![phase times](figures/phase_times.png)" in md
    assert (out / "figures" / FIGURES["phase_times"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # a collector bar and a learner bar per rank (no pool bar: these runs log no physics time)
    assert labels["y"] == ["n1 rank0: collector", "learner", "n2_pool rank0: collector", "learner",
                           "n2_pool rank1: collector", "learner"]
    assert labels["legend"] == ["collector_env_step_ms", "learner_update_ms"]
    # means over repeats 1 and 2: env step 2 + r + 1.5, update 10 + 10 r + 1.5
    assert "### Per-phase time per iteration (ms), tail mean" in md
    assert "| configuration | rank | runs | collector_env_step | learner_update |" in md
    assert "| n1 | 0 | 2 | 3.500 | 11.500 |" in md
    assert "| n2_pool | 0 | 2 | 3.500 | 11.500 |" in md
    assert "| n2_pool | 1 | 2 | 4.500 | 21.500 |" in md
    assert "No per-phase figure" not in md
    assert '<td style="text-align: right;">21.500</td>' in html
    assert "`ranks[].phase_ms`" in md  # metric definitions list the per-rank field


def _learning_run(tmp_path, config, repeat, ranks, learns=True):
    """Rank r of repeat k: episode length 10 i k + 2 r, return (i + r) k, lin-vel tracking
    0.01 k + 0.002 r at log point i = 1..4 (env steps 100 i); `learns=False`: none of these tags."""
    total = linear_points(4, 100.0 * ranks, 1.0)
    tags = {}
    if learns:
        tags = {r: {"Episode/length": [(s, t, 10.0 * s * repeat + 2 * r) for s, t, _ in total],
                    "Episode/return": [(s, t, float((s + r) * repeat)) for s, t, _ in total],
                    "Reward/tracking_lin_vel": [(s, t, 0.01 * repeat + 0.002 * r) for s, t, _ in total]}
                for r in range(ranks)}
    return write_run(tmp_path / "runs" / f"p_r{repeat}_{config}", total, ranks=ranks, rank_time_tags=tags,
                     run_json={"resolved_config": {"config": config, "repeat": repeat,
                                                   "devices": ",".join(map(str, range(ranks))), "world_size": ranks}})


def test_learning_curves_per_configuration(tmp_path, monkeypatch):
    configs = (("n1", 1, True), ("n2_pool", 2, True), ("n1_quiet", 1, False))
    dirs = [_learning_run(tmp_path, c, k, ranks, learns) for k in (1, 2) for c, ranks, learns in configs]
    metrics = [analyze_run(d) for d in dirs]
    paths = []
    for m in metrics:
        paths.append(tmp_path / f"{m['run']}.json")
        paths[-1].write_text(json.dumps(m))
    (tmp_path / "summary.json").write_text(json.dumps(summarize(metrics, [c for c, _, _ in configs])))

    drawn, thin, styles, markers = {}, {}, {}, {}
    save = plots._save

    def capture(fig, path):
        if path.name == FIGURES["learning_curves"]:
            for name, ax in zip(plots.LEARNING_PANELS, fig.axes):
                lines = ax.get_lines()
                drawn[name] = {line.get_label(): (list(line.get_xdata()), list(line.get_ydata()))
                               for line in lines if line.get_linewidth() == plots.MEAN_LW}
                thin[name] = sum(line.get_linewidth() == plots.RUN_LW for line in lines)
                styles[name] = {line.get_label(): (line.get_linestyle(), line.get_zorder())
                                for line in lines if line.get_linewidth() == plots.MEAN_LW}
                markers[name] = {line.get_marker() for line in lines if line.get_linewidth() == plots.RUN_LW}
                assert ax.get_ylabel() == plots.LEARNING_PANELS[name]
        save(fig, path)

    monkeypatch.setattr(plots, "_save", capture)
    out = tmp_path / "rep"
    write_report(tmp_path / "summary.json", paths, out / "r.md", out / "r.html", out / "figures", run_dirs=dirs)
    md, html = (out / "r.md").read_text(), (out / "r.html").read_text()

    assert (out / "figures" / FIGURES["learning_curves"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "![learning curves](figures/learning_curves.png)" in md
    assert "weighted and scaled by 0.02" in md and "No learning curves" not in md
    assert 'alt="learning curves"' in html
    # one thick line per configuration with data, labelled with it; n1_quiet logged nothing
    n1, n2 = "n1 (mean of 2 runs)", "n2_pool (mean of 2 runs)"
    assert list(drawn) == ["length", "tracking_lin_vel", "return", "tracking_ang_vel"]
    assert {name: sorted(lines) for name, lines in drawn.items()} == {
        "length": [n1, n2], "tracking_lin_vel": [n1, n2], "return": [n1, n2], "tracking_ang_vel": []}
    assert thin == {"length": 4, "tracking_lin_vel": 4, "return": 4, "tracking_ang_vel": 0}  # every run, thin
    # n1 is not hidden under n2: another dash, drawn above it; every run's points marked
    (n1_dash, n1_z), (n2_dash, n2_z) = styles["length"][n1], styles["length"][n2]
    assert n1_dash != n2_dash and n1_z > n2_z
    assert markers["length"] == {"o", "s"}
    # x: cumulative env steps of all ranks (100 per rank and log point)
    assert drawn["length"][n1][0] == [100.0, 200.0, 300.0, 400.0]
    assert drawn["length"][n2][0] == [200.0, 400.0, 600.0, 800.0]
    # length: rank mean 10 i k (+ 1 with two ranks), then mean over repeats k = 1, 2 -> 15 i (+ 1)
    assert drawn["length"][n1][1] == pytest.approx([15.0, 30.0, 45.0, 60.0])
    assert drawn["length"][n2][1] == pytest.approx([16.0, 31.0, 46.0, 61.0])
    # return: (i + r_mean) k -> 1.5 i (+ 0.75 with two ranks)
    assert drawn["return"][n1][1] == pytest.approx([1.5, 3.0, 4.5, 6.0])
    assert drawn["return"][n2][1] == pytest.approx([2.25, 3.75, 5.25, 6.75])
    # lin-vel tracking: 0.01 k + 0.002 r -> 0.015 (0.016 with two ranks); float32 events
    assert drawn["tracking_lin_vel"][n1][1] == pytest.approx([0.015] * 4)
    assert drawn["tracking_lin_vel"][n2][1] == pytest.approx([0.016] * 4)
    assert "0.04" in plots.LEARNING_PANELS["tracking_lin_vel"]


def test_learning_curves_placeholder_without_events(tmp_path):
    dirs = [_learning_run(tmp_path, "n1", k, 1, learns=False) for k in (1, 2)]
    metrics = [analyze_run(d) for d in dirs]
    paths = []
    for m in metrics:
        paths.append(tmp_path / f"{m['run']}.json")
        paths[-1].write_text(json.dumps(m))
    (tmp_path / "summary.json").write_text(json.dumps(summarize(metrics, ["n1"])))
    out = tmp_path / "rep"
    write_report(tmp_path / "summary.json", paths, out / "r.md", out / "r.html", out / "figures", run_dirs=dirs)
    md = (out / "r.md").read_text()
    assert (out / "figures" / FIGURES["learning_curves"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "No learning curves: the runs logged no `Episode/length`" in md
    assert "![learning curves]" not in md


def test_learning_plot_without_a_common_range_labels_the_runs(tmp_path, monkeypatch):
    from sacscale.analysis.learning import CURVES, mean_curve

    empty = {"env_steps": [], "value": []}
    runs = {"a": {**{n: empty for n in CURVES}, "length": {"env_steps": [1.0, 2.0], "value": [5.0, float("nan")]}},
            "b": {**{n: empty for n in CURVES}, "length": {"env_steps": [3.0, 4.0], "value": [7.0, 8.0]}}}
    groups = {"n1": {"runs": runs, "mean": {n: mean_curve([r[n] for r in runs.values()]) for n in CURVES}}}
    labels = {}
    save = plots._save

    def capture(fig, path):
        if path.name == "l.png":
            labels["legend"] = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
            labels["lines"] = [len(line.get_xdata()) for line in fig.axes[0].get_lines()]
        save(fig, path)

    monkeypatch.setattr(plots, "_save", capture)
    assert plots.learning_curves(groups, tmp_path / "l.png") is True
    assert labels == {"legend": ["n1 (runs only: no common env steps)"], "lines": [1, 2]}  # NaN point dropped
    assert plots.learning_curves({}, tmp_path / "none.png", "nothing here") is False
    assert (tmp_path / "none.png").read_bytes()[:4] == b"\x89PNG"


def test_a_dirty_commit_is_named_with_the_stored_diff():
    from sacscale.report.build import environment_section

    project = {"commit": "ab" * 20, "dirty": True,
               "diff": {"file": "source.diff", "bytes": 1234, "sha256": "cd" * 32}}
    text = environment_section({"project": project})[0].items[0]
    assert text.startswith(f"project commit: `{'ab' * 20}` (uncommitted changes) plus the stored diff (`source.diff`")
    assert "git apply --binary source.diff" in text
    older = environment_section({"project": {"commit": "ab" * 20, "dirty": True}})[0].items[0]
    assert "no diff was stored" in older


def test_quality_table_means_each_configurations_evaluations():
    from sacscale.report.tables import quality_table

    def ev(lin, yaw, falls):
        return {"env_steps": 100, "protocol": {"envs_per_command": 8, "commands": {"a": [0, 0, 0]}, "seconds": 20,
                                               "settle_s": 1.0},
                "overall": {"rms_error": {"lin_vel_xy": lin, "yaw_rate": yaw}, "fall_rate": falls,
                            "normalised_tracking": {"lin_vel_xy": 0.9, "yaw_rate": 0.8}},
                "ratio_to_stand_still": {"lin_vel_xy": lin / 0.5, "yaw_rate": yaw / 0.4}}

    metrics = [{"run": "r1_a", "config": "a"}, {"run": "r2_a", "config": "a"}, {"run": "r1_b", "config": "b"}]
    table = quality_table({"r1_a": ev(0.1, 0.1, 0.0), "r2_a": ev(0.3, 0.2, 0.5), "r1_b": ev(0.5, 0.4, 0.0)}, metrics)
    rows = {r[0]: r for r in table.rows}
    assert rows["a"][1] == "2" and rows["a"][3] == "0.200" and rows["a"][7] == "0.250"
    assert rows["b"][4].startswith("1.0")  # as bad as standing still
    assert quality_table({}, metrics) is None


@pytest.mark.parametrize("ci, n, says", [
    ([1.70, 1.90], 3, "the interval lies above 1, the compared configuration is faster"),
    ([0.95, 1.20], 5, "the interval includes 1, no conclusion about the direction"),
    ([0.60, 0.90], 3, "the interval lies below 1, the compared configuration is slower"),
    ([0.75, 0.89], 2, "too few repeats to support a conclusion"),
    (None, 0, "too few repeats to support a conclusion"),
])
def test_ratio_line_says_what_the_interval_supports(ci, n, says):
    from sacscale.report.verdict import ratio_line

    c = {"compared": "n2", "baseline": "n1", "ratio_of_means": 1.8, "ratio_std_propagated": 0.07,
         "ratio_ci95": ci, "ci_repeats": n}
    line = ratio_line(c)
    assert line.startswith("`n2` / `n1` = 1.800x, ") and f"n = {n} paired repeat(s)" in line and says in line


def test_ratio_line_flags_a_wide_interval_and_few_repeats():
    from sacscale.report.verdict import ratio_line

    c = {"compared": "n2", "baseline": "n1", "ratio_of_means": 1.5, "ratio_std_propagated": 0.3,
         "ratio_ci95": [1.05, 1.95], "ci_repeats": 3, "per_repeat_ratio_stats": {"n": 3, "min": 1.1, "max": 1.9}}
    line = ratio_line(c)
    assert "the interval is wide" in line and "read it with the per-repeat ratios 1.100 .. 1.900" in line
    narrow = ratio_line({**c, "ratio_ci95": [1.45, 1.55], "ci_repeats": 8})
    assert "wide" not in narrow and "per-repeat" not in narrow


def test_single_points_are_drawn_with_markers(tmp_path, monkeypatch):
    """A run that logged one episode return is a visible marker, not an empty line."""
    lines = {}
    save = plots._save

    def capture(fig, path):
        lines[path.name] = [(ln.get_marker(), ln.get_linestyle(), len(ln.get_xdata()))
                            for ln in fig.axes[0].get_lines()]
        save(fig, path)

    monkeypatch.setattr(plots, "_save", capture)
    metrics = [{"config": "n1_cpu", "repeat": 1, "series": {"episode_return": [[0.0, 4, 2.5]]}},
               {"config": "n2_cpu", "repeat": 1, "series": {"episode_return": [[0.0, 4, 3.0]]}}]
    assert plots.return_vs_time(metrics, tmp_path / "r.png") is True
    (m1, dash1, n1), (m2, dash2, n2) = lines["r.png"]
    assert (n1, n2) == (1, 1) and m1 not in ("None", "", None) and m1 != m2 and dash1 != dash2
    assert plots.return_vs_time([{"config": "n1_cpu", "repeat": 1, "series": {}}], tmp_path / "none.png") is False


def _with_quality_and_trainers(tmp_path):
    """A run set whose summary carries time to quality, and whose plan runs the reference
    trainer for one configuration."""
    paths = _run_set(tmp_path, [("ref_n1", 1000.0, 1), ("ours_n1", 1500.0, 1)])
    summary = json.loads((tmp_path / "summary.json").read_text())
    reached = {"reached": 2, "of": 2, "threshold": 950.0,
               "env_steps": describe([3_400_000.0, 3_600_000.0]), "seconds": describe([120.0, 121.0])}
    never = {"reached": 0, "of": 2, "threshold": None,
             "env_steps": {"n": 0, "mean": None, "std": None, "min": None, "max": None, "values": []},
             "seconds": {"n": 0, "mean": None, "std": None, "min": None, "max": None, "values": []}}
    summary["configs"]["ours_n1"]["time_to_quality"] = {"episode_length": reached, "normalised_tracking_ang_vel": never}
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    env = json.loads((tmp_path / "environment.json").read_text())
    env["plan"]["run_configs"] = {"ref_n1": {"trainer": "unilab"}, "ours_n1": {"trainer": "sacscale"}}
    (tmp_path / "environment.json").write_text(json.dumps(env))
    return paths, summary


def test_time_to_quality_and_the_trainers_side_by_side(tmp_path):
    paths, _ = _with_quality_and_trainers(tmp_path)
    _, md, _ = _write(tmp_path, paths)
    assert "### Time to quality" in md
    assert "| ours_n1 | episode length >= 950 | 2/2 | 3,500,000 | 120.5 |" in md
    assert "| ours_n1 | yaw-rate tracking >= 0.65 of max |" not in md  # none reached it: no row of n/a
    assert "### The trainers side by side" in md
    side = md.split("### The trainers side by side")[1]
    assert "| ref_n1 | unilab |" in side and "| ours_n1 | sacscale |" in side and "| 3,500,000 |" in side


def test_the_scaling_curve_needs_three_gpu_counts(tmp_path):
    from sacscale.report.plots import scaling_points

    _run_set(tmp_path, [("n1_local", 1000.0, 1), ("n2_pool", 1900.0, 2), ("n4_pool", 3600.0, 4),
                        ("n1_total", 1800.0, 1)])
    summary = json.loads((tmp_path / "summary.json").read_text())
    points = scaling_points(summary)
    assert [(p["ranks"], p["baseline"]) for p in points] == [(2, "n1_local"), (4, "n1_local")]  # not n1_total's
    assert points[1]["speedup"] == pytest.approx(3.6) and points[1]["efficiency"] == pytest.approx(0.9)
    assert points[1]["ci"] == summary["comparisons"][1]["ratio_ci95"]
    two = {**summary, "configs": {k: v for k, v in summary["configs"].items() if k in ("n1_local", "n2_pool")}}
    assert scaling_points(two) == []
    plots.scaling_bars(summary, tmp_path / "curve.png")
    assert (tmp_path / "curve.png").read_bytes()[:4] == b"\x89PNG"


def test_runs_are_listed_in_the_order_they_ran_whatever_order_the_files_come_in(tmp_path):
    paths = _run_set(tmp_path, [("n1_local", 1000.0, 1), ("n2_pool", 2000.0, 2)])
    summary = json.loads((tmp_path / "summary.json").read_text())
    ran = ["p_r1_n1_local", "p_r1_n2_pool", "p_r2_n2_pool", "p_r2_n1_local"]  # counterbalanced
    summary["meta"]["execution_order"] = ran
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    by_name = {p.stem: p for p in paths}
    _, md, _ = _write(tmp_path, sorted(paths, reverse=True))
    table = md.split("### Per-run numbers")[1].split("###")[0]
    assert [line.split("|")[1].strip() for line in table.splitlines() if line.startswith("| p_r")] == ran
    assert "r1: n1_local, n2_pool; r2: n2_pool, n1_local" in md
    _, in_order, _ = _write(tmp_path, [by_name[r] for r in ran])
    assert in_order == md


def test_logged_tracking_table_is_the_tail_of_each_runs_tracking_over_its_maximum():
    from sacscale.report.tables import logged_tracking_table

    base = {"tracking_lin_vel": 0.0177, "tracking_lin_vel_max": 0.04,
            "tracking_ang_vel": 0.0162, "tracking_ang_vel_max": 0.03}

    def curves(lin, yaw, n=20):
        steps = [float(1000 * (i + 1)) for i in range(n)]
        return {"length": {"env_steps": steps, "value": [900.0] * n},
                "tracking_lin_vel": {"env_steps": steps, "value": [0.0] * (n - 2) + lin},
                "tracking_ang_vel": {"env_steps": steps, "value": [0.0] * (n - 2) + yaw}}

    empty = {"env_steps": [], "value": []}
    learning = {"a": {"runs": {"r1_a": curves([0.036, 0.040], [0.024, 0.027])}},
                "ref": {"runs": {"r1_ref": {"length": {"env_steps": [5.0], "value": [10.0]},
                                            "tracking_lin_vel": empty, "tracking_ang_vel": empty}}}}
    table = logged_tracking_table(learning, base)
    # the last 10% of 20 points: the last 2; (0.036 + 0.040) / 2 / 0.04 = 0.95, (0.024 + 0.027) / 2 / 0.03 = 0.85
    assert table.rows == [["r1_a", "a", "20,000", "0.95", "0.85"]]  # the reference's run (no terms) is left out
    assert "stands still earns 0.44 and 0.54" in table.caption
    # the run's env steps, not the last point of its episode-length curve (which ends where an episode last did)
    learning["a"]["runs"]["r1_a"]["length"] = {"env_steps": [160.0], "value": [30.0]}
    assert logged_tracking_table(learning, base).rows[0][2] == "20,000"  # the last point of any curve
    assert logged_tracking_table(learning, base, {"r1_a": 24_576.0}).rows[0][2] == "24,576"  # metrics' total
    assert logged_tracking_table({"ref": learning["ref"]}, base) is None
    assert logged_tracking_table(None, base) is None


def _summary(configs: dict[str, tuple[str, int]], ci=None, n=3) -> dict:
    """configs: name -> (devices, ranks); the last is compared with the first."""
    names = list(configs)
    comps = [] if len(names) < 2 else [{"compared": names[-1], "baseline": names[0], "ratio_of_means": 1.5,
                                        "ratio_ci95": ci, "ci_repeats": n, "ratio_std_propagated": 0.1}]
    return {"configs": {k: {"devices": d, "world_size": w} for k, (d, w) in configs.items()}, "comparisons": comps}


@pytest.mark.parametrize("configs, ci, n, says", [
    ({"n1_cpu": ("cpu", 1), "n2_cpu": ("cpu,cpu", 2)}, [1.4, 1.6], 2,
     "a CPU smoke set. The pipeline ran (4 runs) and the correctness probe passed; the throughput of CPU ranks is "
     "not meaningful"),
    ({"n1_pool7": ("0", 1), "n1_pool15": ("0", 1)}, [1.4, 1.6], 3,
     "compares configurations on 1 GPU (CPU pools, settings or trainers), not GPU counts, so it cannot test the "
     "multi-GPU claim: `n1_pool15` / `n1_pool7` = 1.500x (n = 3, 95% CI 1.400 .. 1.600, above 1: faster)"),
    ({"n1_obsnorm": ("0", 1)}, None, 0, "`n1_obsnorm` on 1 GPU, with no second configuration to compare"),
    ({"n2_shared_nosync": ("0,0", 2), "n2_shared": ("0,0", 2)}, [0.6, 0.7], 3,
     "compares configurations as 2 ranks sharing 1 GPU (gradients summed by gloo between graph segments) (CPU "
     "pools, settings or trainers), not GPU counts"),
    ({"n2_shared_lowent": ("0,0", 2)}, None, 0,
     "`n2_shared_lowent` as 2 ranks sharing 1 GPU (gradients summed by gloo between graph segments), with no "
     "second configuration"),
    ({"n1_local": ("0", 1), "n2_pool": ("0,1", 2)}, [0.9, 1.6], 5,
     "the claim, more env steps/s on more GPUs: `n2_pool` / `n1_local` = 1.500x (n = 5, 95% CI 0.900 .. 1.600, "
     "includes 1: no conclusion about the direction)"),
    ({"n1_local": ("0", 1), "n2_pool": ("0,1", 2)}, [1.4, 1.6], 2,
     "`n2_pool` / `n1_local` = 1.500x (n = 2: too few repeats for a conclusion)"),
])
def test_the_first_line_says_what_the_set_can_show(configs, ci, n, says):
    from sacscale.report.verdict import at_a_glance

    line = at_a_glance(_summary(configs, ci, n), [{}] * 4, {"pass": True})
    assert line.startswith("**At a glance:** ") and says in line and "\n" not in line
    if n < 3:
        assert "CI" not in line  # no interval below 3 paired repeats


def test_a_set_of_ranks_sharing_one_gpu_says_so_and_gives_the_efficiency_interval():
    from sacscale.report.verdict import at_a_glance, efficiency_line, set_kind, verdict_section

    summary = _summary({"n1_pool7": ("0", 1), "n2_shared": ("0,0", 2)}, [1.5, 1.9], 5)
    summary["comparisons"][0].update(weak_scaling_efficiency=0.85, rank_multiple=2.0)
    assert set_kind(summary) == "shared-gpu"
    line = at_a_glance(summary, [{}] * 10, {"pass": True})
    assert "two ranks sharing one GPU" in line and "not the NCCL link between two GPUs" in line
    assert "cannot test the two-GPU claim" in line and "`n2_shared` 85%, 95% CI 75% .. 95% (n = 5)" in line
    assert "95% CI 75% .. 95% (n = 5)" in efficiency_line(summary)
    summary["order"] = ["n1_pool7", "n2_shared"]
    claim = verdict_section(summary, [], {}, None, None)[1].items[0]
    assert "not tested by this set (its ranks share one GPU" in claim
    summary["comparisons"][0]["ci_repeats"] = 2  # below 3 paired repeats: no interval
    assert "CI" not in efficiency_line(summary) and "CI" not in at_a_glance(summary, [{}] * 4, {"pass": True})
    # two GPUs, one rank each: the claim
    assert set_kind(_summary({"n1_local": ("0", 1), "n2_pool": ("0,1", 2)})) == "gpu-counts"


def test_the_probe_line_counts_ranks_in_words():
    from sacscale.report.verdict import probe_line
    one = probe_line({"pass": True, "world_size": 1, "backend": "nccl", "allreduce_in_cuda_graph": True})
    two = probe_line({"pass": True, "world_size": 2, "backend": "gloo", "allreduce_in_cuda_graph": False})
    assert "(1 rank, nccl, all-reduce inside the CUDA graph)" in one
    assert "(2 ranks, gloo, all-reduce outside a CUDA graph)" in two


def test_a_probe_of_one_rank_does_not_claim_the_ranks_agree():
    from sacscale.report.verdict import probe_line
    one = probe_line({"pass": True, "world_size": 1, "backend": "gloo", "allreduce_in_cuda_graph": False})
    assert "ranks' gradients" not in one and "no gradient sync between ranks was tested" in one, one
