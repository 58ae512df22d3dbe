# Stage 5b: the deterministic evaluation of every run's final checkpoint (the policy's
# tracking errors on a fixed command grid against a robot that stands still).


rule evaluate_run:
    input:
        run_json=run_json("{run}"),
        model=model_file(),
    output:
        json=eval_json("{run}"),
    log:
        f"{LOGS}/evaluate_run/{{run}}.log",
    benchmark:
        f"{BENCH}/evaluate_run/{{run}}.tsv"
    priority: 10  # before the next run, as analyze_run
    conda:
        "../../envs/sacscale.yaml"
    threads: workflow.cores
    resources:
        gpu_lock=1,  # evaluation must not steal CPU from a run being measured
        slurm_extra=GPU_NODE,
    params:
        run_dir=lambda wildcards, input: str(Path(input.run_json).parent),
        protocol=eval_args(),
    message:
        "evaluating the policy of {wildcards.run}"
    shell:
        "sacscale evaluate {params.run_dir:q} --model {input.model:q} --output {output.json}"
        " {params.protocol} --threads {threads} > {log} 2>&1"
