# sacscale reproducibility pipeline: environment -> model -> correctness probe ->
# counterbalanced training runs -> metrics -> summary -> manifest -> verification -> report.
# Usage: README.md and docs/pipeline.md; the config keys with their defaults:
# docs/config.md; the stages and their records: docs/architecture.md.
import os
import sys

from snakemake.exceptions import WorkflowError
from snakemake.utils import min_version, validate

from sacscale.pipeline import runplan

min_version("9.0")


configfile: "config.yaml"


# A read-only checkout: one line, not Snakemake's traceback when it makes .snakemake/.
try:
    runplan.check_state_folder(os.getcwd())
except runplan.PlanError as exc:
    raise WorkflowError(f"config error: {exc}") from None


# Config files parsed again, strictly (duplicate keys, YAML alias bombs), and every value
# bounded, finite and free of control characters, before the schema walks them; they and
# the profiles Snakemake read (sys.argv is Snakemake's) are refused where another user
# could have written them or swapped one of theirs in.
try:
    runplan.check_config(workflow.configfiles, config)
    runplan.check_profiles(sys.argv[1:], workflow.main_snakefile)
except runplan.PlanError as exc:
    raise WorkflowError(f"config error: {exc}") from None


# A config that fails the schema: one line naming the key (not the whole schema).
try:
    validate(config, "workflow/schemas/config.schema.yaml")
except WorkflowError as exc:
    raise WorkflowError(runplan.config_error_message(exc)) from None


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/verify.smk"


# A complete or committed run set is read-only: only `verify`, nothing to build.
if not READ_ONLY:

    include: "workflow/rules/environment.smk"
    include: "workflow/rules/reference.smk"
    include: "workflow/rules/model.smk"
    include: "workflow/rules/probe.smk"
    include: "workflow/rules/train.smk"
    include: "workflow/rules/metrics.smk"
    include: "workflow/rules/evaluate.smk"
    include: "workflow/rules/evidence.smk"
    include: "workflow/rules/report.smk"


# Under a cluster executor (profiles/slurm) these run on the submitting host: light work on
# files. Every other rule (verify_env, reference_env, prepare_model, probe_correctness,
# train_run, evaluate_run, render_best_run) is a job on the GPU node. Only rules this
# invocation defines are named: a read-only set defines no more than `all` and `verify`,
# and naming absent rules makes Snakemake warn on every `snakemake verify`.
localrules:
    all,
    verify,


if not READ_ONLY:

    localrules:
        plan,
        analyze_run,
        aggregate,
        manifest,
        verify_evidence,
        report,
        train,
        metrics,


rule all:
    default_target: True
    input:
        final_inputs(),
    # A message, so that the terminal shows this line and not the target's inputs (every
    # file of the set, about 2 KB).
    message:
        f"every output of {RESULTS}/ and {REPORTS}/ is in place"


onsuccess:
    print(where_things_are(), file=sys.stderr)
