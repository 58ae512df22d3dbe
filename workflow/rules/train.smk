# Stage 4: the training matrix, strictly one run at a time in the plan's counterbalanced
# order (r1: n1 n2, r2: n2 n1, r3: n2 n1, r4: n1 n2, ...; plan.json execution_order):
# each run needs the previous run's run.json, and every
# rule that could overlap a run takes the gpu_lock resource (limit 1).
# A run directory appears only complete (written aside, then renamed); a failed run
# fails this rule and is kept under logs/<run set>/attempts/; completed runs stay.
# The inputs are deliberately not ancient(): re-recording the environment, a new probe
# or model, a changed run configuration, or rerunning run k reruns the runs after it,
# so one run set is always one consistent session (with ancient inputs Snakemake skips
# the parameter check of jobs downstream of a job that reruns).


rule train_run:
    input:
        previous_run,
        reference_input,
        env=results("environment.json"),
        probe=results("correctness.json"),
        model=model_file(),
    output:
        run_json=run_json("{run}"),
    # opened by record-run (--log) only once it holds the run's locks, not by the shell (`> log`
    # truncated it before a second invocation of this run was refused). Snakemake itself removes
    # a log before its job starts: a second invocation past the checkout's lock (--nolock)
    # unlinks the first's copy; the run's own train.log keeps the trainer's whole output.
    log:
        f"{LOGS}/train/{{run}}.log",
    benchmark:
        f"{BENCH}/train/{{run}}.tsv"
    conda:
        "../../envs/sacscale.yaml"
    resources:
        gpu_lock=1,
        slurm_extra=GPU_NODE,
    params:
        run_dir=lambda wildcards, output: str(Path(output.run_json).parent),
        work_dir=lambda wildcards, output: str(Path(output.run_json).parent.parent / f".{wildcards.run}.partial"),
        attic=f"{LOGS}/attempts",
        # a run's learning state (optimiser moments, replay: ~20 MB a run) is not evidence:
        # the run keeps a policy-only checkpoint for evaluation and rendering
        state=f"{LOGS}/learning_state",
        resolved=run_resolved,
        env=run_env_args,
        timeout=run_timeout,
        cmd=train_args,
        what=run_description,
    message:
        "training {wildcards.run} ({params.what})"
    # The wrapper's stdout (the trainer's whole output) goes to --log; its stderr, the
    # terminal's, gets a progress line now and then (iteration, env steps/s, ETA). A failed
    # run is not started again: its attempt stays in the attic for diagnosis.
    # --machine-lock: one training run at a time on this machine, across invocations (a run
    # that finds another invocation's run training is refused, naming it: pipeline/machine_lock).
    shell:
        "sacscale record-run --run-dir {params.run_dir:q} --work-dir {params.work_dir:q}"
        " --attic {params.attic:q} --state-dir {params.state:q} --resolved-json {params.resolved:q} --timeout {params.timeout}"
        " --machine-lock --log {log:q} {params.env} -- {params.cmd}"


# `snakemake train`: the whole training matrix (and what it needs), nothing after it.
rule train:
    input:
        all_run_json(),
