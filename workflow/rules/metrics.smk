# Stages 5-6: per-run metrics from the event files, then per-configuration statistics
# and the scaling comparisons.


rule analyze_run:
    input:
        run_json=run_json("{run}"),
    output:
        json=metrics_json("{run}"),
    log:
        f"{LOGS}/analyze_run/{{run}}.log",
    benchmark:
        f"{BENCH}/analyze_run/{{run}}.tsv"
    # A completed run's metrics come before the next run starts (both wait for the
    # gpu_lock): an interrupted matrix leaves every completed run with its metrics.
    priority: 10
    conda:
        "../../envs/sacscale.yaml"
    resources:
        gpu_lock=1,  # reading events must not steal CPU from a run being measured
    params:
        run_dir=lambda wildcards, input: str(Path(input.run_json).parent),
    message:
        "metrics of {wildcards.run} from its event files"
    shell:
        "sacscale analyze-run {params.run_dir:q} --output {output.json} > {log} 2>&1"


rule aggregate:
    input:
        metrics=all_metrics(),
    output:
        csv=report(
            results("summary.csv"),
            caption="../report/summary.rst",
            category="Tables",
        ),
        json=results("summary.json"),
    log:
        f"{LOGS}/aggregate.log",
    benchmark:
        f"{BENCH}/aggregate.tsv"
    conda:
        "../../envs/sacscale.yaml"
    params:
        order=",".join(PLAN.order),
        pairs=pair_args(),
        meta=summary_meta(),
    message:
        f"summary of {len(PLAN.runs)} runs: per-configuration statistics and paired comparisons"
    shell:
        "sacscale aggregate {input.metrics} --csv {output.csv} --json {output.json}"
        " --order {params.order:q} {params.pairs} --meta {params.meta:q} > {log} 2>&1"


# `snakemake metrics`: every run's metrics and the summary.
rule metrics:
    input:
        all_metrics(),
        results("summary.json"),
