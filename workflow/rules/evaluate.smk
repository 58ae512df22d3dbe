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
        # evaluate takes no more threads than the CPUs it may use (`--cores 64` on a smaller machine)
        sim_threads=lambda wildcards, threads: min(threads, len(os.sched_getaffinity(0))),
    message:
        "evaluating the policy of {wildcards.run}"
    shell:
        "sacscale evaluate {params.run_dir:q} --model {input.model:q} --output {output.json}"
        " {params.protocol} --threads {params.sim_threads} > {log} 2>&1"


# The report's video: the best-evaluated run's policy (sacscale.eval.best), when on.
rule render_best_run:
    input:
        evals=all_evals(),
        run_records=all_run_json(),  # after every run of the set: a failure here cannot stop one
        model=model_file(),
    output:
        video=f"{REPORTS}/figures/best_run.webp",
        record=f"{REPORTS}/figures/best_run.json",
    log:
        f"{LOGS}/render_best_run.log",
    benchmark:
        f"{BENCH}/render_best_run.tsv"
    conda:
        "../../envs/sacscale.yaml"
    resources:
        gpu_lock=1,
        slurm_extra=GPU_NODE,  # EGL where the GPU is; a login node may have no OpenGL at all
    params:
        runs=lambda wildcards, input: str(Path(input.run_records[0]).parent.parent),
        # the schema fills in the defaults
        size="--seconds {seconds} --width {width} --height {height} --fps {fps}".format(**config["video"]),
        # an animated WebP (Pillow), re-encoded until it fits the set's budget for it
        max_bytes=VIDEO_MAX_BYTES,
    message:
        "rendering the best-evaluated run's policy for the report"
    shell:
        "sacscale render-best --evaluations {input.evals} --runs-dir {params.runs:q} --model {input.model:q}"
        " --output {output.video} --max-bytes {params.max_bytes} --record {output.record} {params.size} > {log} 2>&1"
