# Stages 8-9: the SHA-256 evidence manifest of results/<run set>/, and its verification
# (re-hash every file, recompute every run's metrics from its events).


rule manifest:
    input:
        all_run_json(),
        all_metrics(),
        results("plan.json"),
        results("environment.json"),
        results("model.json"),
        results("correctness.json"),
        results("summary.csv"),
        results("summary.json"),
    output:
        manifest=results("MANIFEST.sha256"),
        json=results("manifest.json"),
    params:
        root=lambda wildcards, output: str(Path(output.manifest).parent),
    log:
        f"{LOGS}/manifest.log",
    benchmark:
        f"{BENCH}/manifest.tsv"
    conda:
        "../../envs/sacscale.yaml"
    shell:
        "sacscale manifest {params.root:q} --output {output.manifest} --json {output.json} > {log} 2>&1"


rule verify_evidence:
    input:
        manifest=results("MANIFEST.sha256"),
    output:
        json=results("verify.json"),
    params:
        root=lambda wildcards, input: str(Path(input.manifest).parent),
    log:
        f"{LOGS}/verify_evidence.log",
    benchmark:
        f"{BENCH}/verify_evidence.tsv"
    conda:
        "../../envs/sacscale.yaml"
    shell:
        "sacscale verify {params.root:q} --output {output.json} > {log} 2>&1"


# `snakemake verify`: check the evidence as it is now. No inputs on purpose, so that
# asking for it never rebuilds anything (a rebuilt manifest would hide tampering) and it
# runs every time; it exits non-zero naming each changed, missing or extra file and each
# metric that does not recompute (printed and kept in the log).
rule verify:
    params:
        root=RESULTS,
    log:
        f"{LOGS}/verify.log",
    conda:
        "../../envs/sacscale.yaml"
    shell:
        "sacscale verify {params.root:q} 2>&1 | tee {log}"
