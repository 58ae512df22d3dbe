# Stage 1b (only for runs with trainer: unilab): the reference trainer's own environment
# (unilab 1.5.2 pins MuJoCo 3.11, so never ours), created when the config asks and
# missing, and recorded beside the runs as evidence.


rule reference_env:
    input:
        plan=results("plan.json"),
    output:
        record=reference_record(),
    log:
        f"{LOGS}/reference_env.log",
    benchmark:
        f"{BENCH}/reference_env.tsv"
    conda:
        "../../envs/sacscale.yaml"
    resources:
        slurm_extra=GPU_NODE,  # recorded where its runs execute
    params:
        python=config.get("reference", {}).get("python", ".venv-ref/bin/python"),
        create="--create" if config.get("reference", {}).get("create", False) else "",
    message:
        "recording the reference trainer's environment ({params.python})"
    shell:
        "sacscale reference-env --python {params.python:q} {params.create} --output {output.record} > {log} 2>&1"
