# Stage 1: record the software/hardware environment and check the plan fits the machine
# (GPUs, CPU pools, learner graph hooks, trainer present), before anything else runs.


rule verify_env:
    output:
        env=results("environment.json"),
    params:
        plan=plan_json(),
    log:
        f"{LOGS}/verify_env.log",
    conda:
        "../../envs/sacscale.yaml"
    shell:
        "sacscale verify-env --output {output.env} --plan-json {params.plan:q}"
        " --require-graph-hooks --require-commands train,probe,prepare-model > {log} 2>&1"
