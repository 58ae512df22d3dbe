# sacscale reproducibility pipeline: environment -> model -> correctness probe ->
# alternating training runs -> metrics -> summary -> manifest -> verification -> report.
# Design: ../shared/docs/pipeline.md in the project; usage: README.md.
from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "config.yaml"


validate(config, "workflow/schemas/config.schema.yaml")


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/verify.smk"


# A complete or committed run set is read-only: only `verify`, nothing to build.
if not READ_ONLY:

    include: "workflow/rules/environment.smk"
    include: "workflow/rules/model.smk"
    include: "workflow/rules/probe.smk"
    include: "workflow/rules/train.smk"
    include: "workflow/rules/metrics.smk"
    include: "workflow/rules/evaluate.smk"
    include: "workflow/rules/evidence.smk"
    include: "workflow/rules/report.smk"


# Under a cluster executor (profiles/slurm) these run on the submitting host: light work on
# files. Every other rule (verify_env, prepare_model, probe_correctness, train_run,
# evaluate_run) is a job on the GPU node.
localrules:
    all,
    plan,
    analyze_run,
    aggregate,
    manifest,
    verify_evidence,
    report,
    verify,
    train,
    metrics,


rule all:
    default_target: True
    input:
        final_inputs(),
