# Stage 7: the Markdown and HTML report with figures; every output is also registered
# for the audit zip (`snakemake --report reports/<set>/audit.zip`), with the evidence the
# earlier stages register (category Evidence).


# The per-phase figure has data only where runs were traced: otherwise its file says "not
# drawn", and the audit zip leaves it out as the report does (it is still written: the
# workflow's final outputs name it).
TRACED = any(rc.trace for rc in PLAN.run_configs.values())


rule report:
    input:
        summary=results("summary.json"),
        metrics=all_metrics(),
        runs=all_run_json(),  # their directories' event files give the learning curves
        evals=all_evals(),
        env=results("environment.json"),
        model=results("model.json"),
        probe=results("correctness.json"),
        verify=results("verify.json"),
        manifest=results("manifest.json"),
        deviations=deviations_input(),
        video=video_outputs(),
    output:
        md=report(f"{REPORTS}/report.md", caption="../report/report_md.rst", category="Report"),
        html=report(f"{REPORTS}/report.html", caption="../report/report_html.rst", category="Report"),
        # the numbers its tables show, before formatting: verify compares them one by one
        numbers=f"{REPORTS}/numbers.json",
        throughput=report(
            figure_paths()["throughput_by_repeat"],
            caption="../report/throughput_by_repeat.rst",
            category="Figures",
        ),
        scaling=report(figure_paths()["scaling_bars"], caption="../report/scaling_bars.rst", category="Figures"),
        cumulative=report(
            figure_paths()["cumulative_steps"], caption="../report/cumulative_steps.rst", category="Figures"
        ),
        returns=report(figure_paths()["return_vs_time"], caption="../report/return_vs_time.rst", category="Figures"),
        phases=(
            report(figure_paths()["phase_times"], caption="../report/phase_times.rst", category="Figures")
            if TRACED
            else figure_paths()["phase_times"]
        ),
        learning=report(figure_paths()["learning_curves"], caption="../report/learning_curves.rst", category="Figures"),
    log:
        f"{LOGS}/report.log",
    benchmark:
        f"{BENCH}/report.tsv"
    conda:
        "../../envs/sacscale.yaml"
    params:
        figures=lambda wildcards, output: str(Path(output.throughput).parent),
        run_dirs=lambda wildcards, input: shlex.join(str(Path(p).parent) for p in input.runs),
        deviations=lambda wildcards, input: f"--deviations {input.deviations}" if input.deviations else "",
        attempts=f"{LOGS}/attempts",
        evals=lambda wildcards, input: f"--evaluations {shlex.join(input.evals)}" if input.evals else "",
        video=video_args,
    message:
        f"writing {REPORTS}/report.md and report.html with figures"
    shell:
        "sacscale report --summary {input.summary} --metrics {input.metrics}"
        " --output-md {output.md} --output-html {output.html} --figures-dir {params.figures}"
        " --environment {input.env} --model {input.model} --correctness {input.probe}"
        " --verification {input.verify} --manifest-json {input.manifest} --run-dirs {params.run_dirs}"
        " --attempts-dir {params.attempts:q} {params.deviations} {params.evals} {params.video} > {log} 2>&1"
