# Stage 3: correctness probe of data-parallel gradient sync against a single-rank
# reference. Exits non-zero unless it passes; training runs only after a pass.


rule probe_correctness:
    input:
        env=results("environment.json"),
    output:
        json=results("correctness.json"),
    params:
        args=probe_args(),
        timeout=PLAN.probe["timeout_s"],
    resources:
        gpu_lock=1,
        slurm_extra=GPU_NODE,
    log:
        f"{LOGS}/probe_correctness.log",
    benchmark:
        f"{BENCH}/probe_correctness.tsv"
    conda:
        "../../envs/sacscale.yaml"
    shell:
        "timeout --kill-after=30 {params.timeout} "
        "sacscale probe correctness {params.args} --output {output.json} > {log} 2>&1"
