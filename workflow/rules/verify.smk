# `snakemake verify`, the one rule a read-only run set keeps (common.smk: run_set_mode).


# `snakemake verify`: check the evidence as it is now. No inputs on purpose, so that
# asking for it never rebuilds anything (a rebuilt manifest would hide tampering) and it
# runs every time; it exits non-zero naming each refused link or special file, each
# changed, missing or extra file, each metric, record, summary figure or report number
# that does not recompute (printed and kept in the log; logs/ is not evidence).
rule verify:
    log:
        f"{LOGS}/verify.log",
    # One benchmark file per check: a benchmark is an output, and a fixed path would make
    # `snakemake verify` find it present and skip the check next time.
    benchmark:
        f"{BENCH}/verify/{VERIFY_STAMP}.tsv"
    conda:
        "../../envs/sacscale.yaml"
    params:
        root=RESULTS,
    message:
        f"verifying {RESULTS}/ as it is now"
    shell:
        "sacscale verify {params.root:q} --progress 2>&1 | tee {log}"
