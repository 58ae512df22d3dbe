# Stage 3: correctness probe of data-parallel gradient sync against a single-rank
# reference. Exits non-zero unless it passes; training runs only after a pass.


rule probe_correctness:
    input:
        env=results("environment.json"),
    output:
        json=report(results("correctness.json"), caption="../report/evidence_probe.rst", category="Evidence"),
    log:
        f"{LOGS}/probe_correctness.log",
    benchmark:
        f"{BENCH}/probe_correctness.tsv"
    conda:
        "../../envs/sacscale.yaml"
    resources:
        gpu_lock=1,
        slurm_extra=GPU_NODE,
    params:
        args=probe_args(),
        timeout=PLAN.probe["timeout_s"],
    message:
        f"probing data-parallel gradient sync on devices {PLAN.probe['devices']} against a single rank"
    # --foreground: timeout stays in the pipeline's process group (by default it makes its own),
    # so a stop of the pipeline (Ctrl-C, kill -TERM -PGID) reaches the command, which ends its
    # own children; past the limit it ends the command the same way
    shell:
        "timeout --foreground --kill-after=30 {params.timeout} "
        "sacscale probe correctness {params.args} --output {output.json} > {log} 2>&1"
