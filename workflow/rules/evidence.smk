# Stages 8-9: the SHA-256 evidence manifest of results/<run set>/, and its verification
# (re-hash every file, recompute everything derived); `snakemake verify` is in verify.smk.


rule manifest:
    input:
        all_run_json(),
        all_metrics(),
        results("plan.json"),
        results("environment.json"),
        results("source.diff"),
        results("model.json"),
        results("correctness.json"),
        results("summary.csv"),
        results("summary.json"),
        evals=all_evals(),
    output:
        manifest=report(results("MANIFEST.sha256"), caption="../report/evidence_manifest.rst", category="Evidence"),
        json=report(results("manifest.json"), caption="../report/evidence_manifest.rst", category="Evidence"),
    log:
        f"{LOGS}/manifest.log",
    benchmark:
        f"{BENCH}/manifest.tsv"
    conda:
        "../../envs/sacscale.yaml"
    params:
        root=lambda wildcards, output: str(Path(output.manifest).parent),
        scope=scope_args,
    message:
        f"hashing {RESULTS}/ into MANIFEST.sha256"
    shell:
        "sacscale manifest {params.root:q} {params.scope} --output {output.manifest} --json {output.json} > {log} 2>&1"


rule verify_evidence:
    input:
        manifest=results("MANIFEST.sha256"),
        # after the best run's video (render-best writes into the report's folder, whose
        # record of the choice verify reads): never beside it
        video=video_outputs(),
    output:
        json=report(results("verify.json"), caption="../report/evidence_verify.rst", category="Evidence"),
    log:
        f"{LOGS}/verify_evidence.log",
    benchmark:
        f"{BENCH}/verify_evidence.tsv"
    conda:
        "../../envs/sacscale.yaml"
    params:
        root=lambda wildcards, input: str(Path(input.manifest).parent),
    message:
        f"verifying {RESULTS}/: re-hashing every file and recomputing everything derived"
    shell:
        # the report is written after this check (it embeds the verdict): it cannot be checked yet
        "sacscale verify {params.root:q} --report-pending --output {output.json} > {log} 2>&1"
