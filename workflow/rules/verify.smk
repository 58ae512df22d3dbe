# `snakemake verify`, the one rule a read-only run set keeps (common.smk: run_set_mode).


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
