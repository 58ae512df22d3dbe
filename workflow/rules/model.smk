# Stage 2: build the G1 task model from the asset package (or take a given .mjb: config
# model.from_mjb); save .mjb, its hash and the physics cost per step.


rule prepare_model:
    input:
        source=model_source(),
        env=results("environment.json"),
    output:
        model=model_file(),
        json=report(results("model.json"), caption="../report/evidence_model.rst", category="Evidence"),
    log:
        f"{LOGS}/prepare_model.log",
    benchmark:
        f"{BENCH}/prepare_model.tsv"
    conda:
        "../../envs/sacscale.yaml"
    resources:
        gpu_lock=1,
        slurm_extra=GPU_NODE,
    params:
        outdir=lambda wildcards, output: str(Path(output.model).parent),
        args=model_args(),
        timeout=PLAN.model_timeout_s,
    message:
        "preparing the G1 task model (.mjb, its SHA-256 and physics cost)"
    # --foreground: timeout stays in the pipeline's process group (by default it makes its own),
    # so a stop of the pipeline (Ctrl-C, kill -TERM -PGID) reaches the command, which ends its
    # own children; past the limit it ends the command the same way
    shell:
        "timeout --foreground --kill-after=30 {params.timeout} "
        "sacscale prepare-model --output-dir {params.outdir} --json {output.json} {params.args} > {log} 2>&1"
