# Stage 1: the resolved plan (preset + config) as evidence; then record the software and
# hardware environment (and the diff of a dirty tree) and check the plan fits this machine (GPUs, CPU pools, learner
# graph hooks, trainer present), before anything else runs.


rule plan:
    output:
        plan=results("plan.json"),
    params:
        plan=PLAN.as_dict(),
    log:
        f"{LOGS}/plan.log",
    run:
        write_plan(output.plan, params.plan, log[0])


rule verify_env:
    input:
        plan=results("plan.json"),
    output:
        env=results("environment.json"),
        diff=results("source.diff"),  # the uncommitted code, so a dirty tree can be rebuilt
    resources:
        slurm_extra=GPU_NODE,
    log:
        f"{LOGS}/verify_env.log",
    conda:
        "../../envs/sacscale.yaml"
    shell:
        "sacscale verify-env --output {output.env} --diff-output {output.diff} --plan {input.plan}"
        " --require-graph-hooks --require-commands train,probe,prepare-model > {log} 2>&1"
