# Stage 1: the resolved plan (preset + config) as evidence; then record the software and
# hardware environment (and the diff of a dirty tree) and check the plan fits this machine (GPUs, CPU pools, learner
# graph hooks, trainer present), before anything else runs.


rule plan:
    output:
        plan=results("plan.json"),
    log:
        f"{LOGS}/plan.log",
    benchmark:
        f"{BENCH}/plan.tsv"
    params:
        plan=PLAN.as_dict(),
    message:
        f"writing the plan of run set {PLAN.run_set}: preset {PLAN.preset}, {len(PLAN.runs)} runs"
    run:
        write_plan(output.plan, params.plan, log[0])


rule verify_env:
    input:
        plan=results("plan.json"),
    output:
        env=report(results("environment.json"), caption="../report/evidence_environment.rst", category="Evidence"),
        diff=results("source.diff"),  # the uncommitted code, so a dirty tree can be rebuilt
    log:
        f"{LOGS}/verify_env.log",
    benchmark:
        f"{BENCH}/verify_env.tsv"
    conda:
        "../../envs/sacscale.yaml"
    resources:
        slurm_extra=GPU_NODE,
    params:
        # the report's video is made at the end: a machine that cannot render is named now
        render="--require-render" if video_outputs() else "",
    message:
        f"recording the software and hardware environment; checking that preset {PLAN.preset} fits this machine"
    shell:
        "sacscale verify-env --output {output.env} --diff-output {output.diff} --plan {input.plan}"
        " --require-graph-hooks --require-commands train,probe,prepare-model {params.render} > {log} 2>&1"
