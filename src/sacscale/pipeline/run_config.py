"""One run configuration of the plan: its entry merged over `run_defaults`, checked field
by field (in a fixed order, so the first problem named is always the same), and resolved
into a `RunConfig`."""

from __future__ import annotations

import os
import re

from sacscale.cpus import first_overlap, format_cpu_list
from sacscale.parallel.matrix_shape import REDO, learner_cpus_absent
from sacscale.pipeline.overrides import (
    check_batch_fits_replay,
    check_disk_asked,
    check_replay_memory,
    check_override,
    check_reference_override,
    check_trainer_values,
    override_fields,
)
from sacscale.pipeline.code_paths_env import check_code_paths
from sacscale.pipeline.interpreter_env import check_interpreter_env
from sacscale.pipeline.machine_lock import VARIABLE as MACHINE_LOCK_VARIABLE
from sacscale.pipeline.plan_model import Host, RunConfig
from sacscale.pipeline.plan_values import (
    DEVICES,
    ENV_NAME,
    MAX_BATCH,
    MAX_CPU_ID,
    MAX_NUM_ENVS,
    NAME,
    RUN_FIELDS,
    TRAINERS,
    PlanError,
    parse_pool,
    positive_int,
    run_field_key,
    seconds,
    shown,
)
from sacscale.pipeline.run_folder_names import record_run_form
from sacscale.pipeline.run_merge import given_fields, merged_fields
from sacscale.pipeline.temporary_env import check_temporary_folders


def resolve_run_config(name: str, entry: dict, defaults: dict, origin: str, host: Host | None,
                       work_folders: list[str] | None = None, layers: list | None = None) -> RunConfig:
    """The checked run configuration `name` (from `origin`: "config" or a preset's name), its
    `entry` merged over `defaults` (run_defaults). `host`: the machine whose CPUs the pools must
    name; None skips that check. `work_folders`: the folders its runs train into (relative to
    this one). `layers`: where each field comes from (plan_values.run_field_key), for a problem
    found in one; None: the entry's, else run_defaults'."""
    layers = layers or [(entry, f"run_configs.{name}", origin), (defaults, "run_defaults", "config")]
    where = run_field_key(name, layers, origin)
    _check_name_and_fields(name, entry, where)
    merged = _merged_entry(entry, defaults)
    _check_description(merged.get("description"), where("description"))
    devices, ranks, kind = _devices(merged, where)
    if kind == "cpu":
        check_cpu_ranks(len(ranks), host, where("devices"))
    pools = _cpu_pools(merged.get("cpu_pools", "auto"), devices, len(ranks), host, where)
    _check_visible_devices(merged.get("cuda_visible_devices"), ranks, kind, where("cuda_visible_devices"))
    _check_sizes(merged, where, _start_folders(merged, work_folders or []))
    trainer = merged.get("trainer") or "sacscale"
    if trainer == "sacscale":
        check_batch_fits_replay(merged, where)  # ours; the reference sizes its own replay
        if host is not None and kind == "cpu":
            check_replay_memory(merged, len(ranks), where)
    timeout = seconds(merged.get("timeout_s", 3600), where("timeout_s"), 3600)
    if trainer not in TRAINERS:
        raise PlanError(f"{where('trainer')}: {trainer!r} is not one of {', '.join(TRAINERS)}")
    if trainer == "unilab":
        _check_reference_run(merged, kind, where)
    else:
        _check_our_overrides(merged, where)
        if host is not None and work_folders:  # this machine's disk, where its runs train
            check_disk_asked(merged, work_folders[0], where)
        _check_learner_cpus(merged, pools, len(ranks), host, where)
    return RunConfig(
        name=name,
        devices=devices,
        world_size=len(ranks),
        device_kind=kind,
        cpu_pools=pools,
        num_envs=merged["num_envs"],
        batch_size=merged.get("batch_size"),
        sim_threads=merged.get("sim_threads"),
        log_every=merged["log_every"],
        trace=bool(merged.get("trace", False)),
        timeout_s=float(timeout),
        cuda_visible_devices=(
            None if merged.get("cuda_visible_devices") is None else str(merged["cuda_visible_devices"])
        ),
        env=merged["env"],
        overrides=merged["overrides"],
        description=str(merged.get("description", "")),
        trainer=trainer,
    )


def check_cpu_ranks(ranks: int, host: Host | None, key: str) -> None:
    """CPU ranks (of a run configuration or the probe) within this machine's CPUs (given
    `host`): each rank is a process that simulates and learns on CPUs of its own (its pool;
    with cpu_pools auto, its share), so more ranks than CPUs would only take turns."""
    if host is not None and ranks > len(host.cpus):
        raise PlanError(f"{key}: {ranks} CPU ranks for the {len(host.cpus)} CPU(s) of this machine (CPUs available "
                        f"to this process: {format_cpu_list(host.cpus)}); each rank needs a CPU of its own: give "
                        f"at most {len(host.cpus)}")


def _check_name_and_fields(name, entry: dict, where) -> None:
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise PlanError(f"{where()}: configuration names may hold letters, digits, '_', '.', '-' only")
    own = record_run_form(name)
    if own:  # its runs, `<prefix>_r<k>_<name>`, would read as record-run's own folders
        raise PlanError(f"{where()}: {own}; a run named so would pass for one of them: rename the configuration")
    unknown = sorted(set(entry) - set(RUN_FIELDS))
    if unknown:
        raise PlanError(f"{where(unknown[0])}: unknown field (known: {', '.join(RUN_FIELDS)})")


def _check_description(description, where: str) -> None:
    """A description given is text with something to show: the report describes the
    configuration with it (a blank one described it with nothing)."""
    if description is not None and not str(description).strip():
        raise PlanError(f"{where}: {str(description)!r} holds no visible text; describe the configuration, "
                        "or leave the key out")


def _merged_entry(entry: dict, defaults: dict) -> dict:
    """The entry over `run_defaults` (sacscale.pipeline.run_merge: `overrides` and `env` key by
    key, a null value removing the key)."""
    merged = given_fields(merged_fields(defaults, entry))
    merged["overrides"] = dict(merged.get("overrides") or {})
    merged["env"] = {k: str(v) for k, v in (merged.get("env") or {}).items()}
    return merged


def _devices(merged: dict, where) -> tuple[str, list[str], str]:
    """(devices as written without blanks, one device per rank, "cpu" or "cuda")."""
    devices = str(merged.get("devices", "")).replace(" ", "")
    if not DEVICES.fullmatch(devices):
        raise PlanError(f"{where('devices')}: {devices!r} is not 'cpu', 'cpu,cpu', '0' or '0,1'-style")
    ranks = devices.split(",")
    kind = "cpu" if ranks[0] == "cpu" else "cuda"
    if kind == "cuda" and len(set(ranks)) != len(ranks):
        _check_shared_gpu(merged, devices, where)
    return devices, ranks, kind


def _check_shared_gpu(merged: dict, devices: str, where) -> None:
    """Ranks sharing a GPU sync through gloo between graph segments (our trainer only)."""
    if (merged.get("trainer") or "sacscale") != "sacscale":
        raise PlanError(f"{where('devices')}: {devices!r} repeats a GPU, which only our trainer supports")
    overrides = merged["overrides"]
    if overrides.get("grad-sync", overrides.get("grad_sync")) == "off":
        return
    if overrides.get("allreduce") != "between-graphs":
        raise PlanError(f"{where('devices')}: {devices!r} puts two ranks on one GPU, whose gradient sync runs "
                        f"through gloo between graph segments: add overrides: {{allreduce: between-graphs}}")


def _cpu_pools(pools, devices: str, world_size: int, host: Host | None, where) -> str:
    """The pools as the trainer's `--collector-cpu-ids` ("auto", or one list per rank joined by
    ";"): one list per rank, disjoint, and (given `host`) of CPUs that exist there."""
    if pools in (None, "auto"):
        return "auto"
    key = where("cpu_pools")
    items = pools.split(";") if isinstance(pools, str) else [str(p) for p in pools]
    if len(items) != world_size:
        raise PlanError(
            f"{key}: {len(items)} CPU list(s) for {world_size} rank(s) (devices {devices!r}); "
            "give one list per rank, or 'auto'"
        )
    parsed = [parse_pool(item, f"{key}: rank {rank}") for rank, item in enumerate(items)]
    overlap = first_overlap(parsed)
    if overlap:
        a, b, shared = overlap
        raise PlanError(f"{key}: the pools of ranks {a} and {b} overlap on CPUs {format_cpu_list(shared)}")
    if host is not None:
        _check_pools_exist(parsed, host, key)
    return ";".join(format_cpu_list(c) for c in parsed)


def _check_learner_cpus(merged: dict, pools: str, world_size: int, host: Host | None, where) -> None:
    """An override of the learners' CPUs as the trainer checks it at its start (one list per
    rank, no CPU of a collector pool, CPUs of this machine), found at planning time."""
    key = next((k for k, f in override_fields(merged["overrides"], where).items() if f == "learner_cpu_ids"), None)
    spec = "" if key is None else str(merged["overrides"][key]).strip()
    if spec in ("", "auto"):
        return
    key = where(f"overrides.{key}")
    items = spec.split(";")
    if len(items) != world_size:
        raise PlanError(f"{key}: {len(items)} CPU list(s) for {world_size} rank(s); give one list per rank "
                        "separated by ';', or 'auto'")
    parsed = [parse_pool(item.strip(), f"{key}: rank {rank}") for rank, item in enumerate(items)]
    pooled = set() if pools == "auto" else {c for item in pools.split(";") for c in parse_pool(item, key)}
    for rank, cpus in enumerate(parsed):
        if set(cpus) & pooled:
            raise PlanError(f"{key}: rank {rank}'s learner CPUs {format_cpu_list(set(cpus) & pooled)} are in a "
                            "collector pool (cpu_pools)")
    overlap = first_overlap(parsed)
    if overlap:
        raise PlanError(f"{key}: the learners of ranks {overlap[0]} and {overlap[1]} share CPUs "
                        f"{format_cpu_list(overlap[2])}")
    if host is not None:
        _check_pools_exist(parsed, host, key)


def check_matrix_learner_cpus(matrix: dict | None, order: list[str], host: Host | None) -> None:
    """The learner CPUs a recorded matrix reserves for the configurations of `order`, held to
    this machine's CPUs as their pools are (given `host`): the plan records them."""
    configs = matrix.get("configs") if isinstance(matrix, dict) and host is not None else None
    for name in order if isinstance(configs, dict) else []:
        if problem := learner_cpus_absent(configs.get(name), host.cpus):
            raise PlanError(f"planner: configs.{name}.learner_cpus: {problem}; {REDO}")


def _check_pools_exist(parsed: list[list[int]], host: Host, key: str) -> None:
    for rank, cpus in enumerate(parsed):
        absent = set(cpus) - set(host.cpus)
        if absent:
            raise PlanError(
                f"{key}: rank {rank} names CPUs {format_cpu_list(absent)} that do not exist "
                f"on this machine (CPUs available to this process: {format_cpu_list(host.cpus)})"
            )


# what the launcher sets for each rank, and the devices it gives them
LAUNCHER_ENV = frozenset({"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                          "CUDA_VISIBLE_DEVICES", "TORCHELASTIC_RUN_ID", "TORCHELASTIC_USE_AGENT_STORE"})


# one entry of CUDA_VISIBLE_DEVICES: an index, or a GPU's or MIG instance's UUID
VISIBLE_DEVICE = re.compile(r"[0-9]{1,3}|(GPU|MIG)-[0-9A-Za-z/-]{1,120}")


def _check_visible_devices(value, ranks: list[str], kind: str, key: str) -> None:
    """CUDA_VISIBLE_DEVICES for the run: entries CUDA reads, as many as the devices name (CUDA
    stops at the first entry it cannot read: 'a,b' hid every GPU and the run failed at its
    start, `needs 1 visible CUDA device(s), but 0 are visible`)."""
    if value is None:
        return
    entries = str(value).split(",")
    bad = next((e for e in entries if not VISIBLE_DEVICE.fullmatch(e)), None)
    if bad is not None:
        raise PlanError(f"{key}: {shown(value)}: {shown(bad)} is not a CUDA device index or a GPU-/MIG- UUID "
                        "(CUDA hides every device from the first entry it cannot read)")
    seen = [str(int(e)) if e.isdigit() else e for e in entries]  # '00' is device 0
    twice = next((e for i, e in enumerate(entries) if seen[i] in seen[:i]), None)
    if twice is not None:  # one GPU under two indices: two ranks on it while the plan says two GPUs
        raise PlanError(f"{key}: {shown(value)} lists the device {shown(twice)} twice; list each GPU once "
                        "(ranks that share a GPU say so in devices, e.g. '0,0')")
    needed = max((int(r) for r in ranks), default=-1) + 1 if kind == "cuda" else 0
    if len(entries) < needed:
        raise PlanError(f"{key}: {shown(value)} makes {len(entries)} device(s) visible; devices name {needed} "
                        "(indices count inside cuda_visible_devices)")


# lock folders, read where snakemake runs: one run's own lock folder would make its locks
# blind to the others'; the training lock is taken by the run wrapper before the trainer
# starts, so a run's own setting of its folder does nothing
LOCK_FOLDER_ENV = {
    "SACSCALE_LOCK_DIR": "the machine's lock folder, not a run's",
    MACHINE_LOCK_VARIABLE: "the folder of the machine's training lock, which the run wrapper takes before the "
                           "trainer starts (a run's own setting has no effect)",
}


# variables that turn torch.compile into a no-op while the run records --compile
COMPILE_OFF_ENV = frozenset({"TORCHDYNAMO_DISABLE", "TORCH_COMPILE_DISABLE"})


# thread counts the math libraries read at start: a bad one is ignored by some, fatal to others
THREAD_COUNT_ENV = frozenset({"OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"})


def _start_folders(merged: dict, work_folders: list[str]) -> tuple[str, ...]:
    """The folders the run's processes start in, where its env's relative paths are taken:
    the trainer's command starts in this one (Snakemake's working folder, where planning
    runs), and the reference trainer's own interpreter in its run's work folder (as
    train-reference starts it, for Hydra's job log), each repeat's own."""
    here = os.getcwd()
    if (merged.get("trainer") or "sacscale") != "unilab":
        return (here,)
    return (here, *(os.path.join(here, folder) for folder in work_folders))


def _check_sizes(merged: dict, where, starts: tuple[str, ...]) -> None:
    """Sizes within their bounds, and environment variable names the shell takes."""
    positive_int(merged.get("num_envs"), where("num_envs"), maximum=MAX_NUM_ENVS)
    positive_int(merged.get("log_every"), where("log_every"))
    if merged.get("batch_size") is not None:
        positive_int(merged["batch_size"], where("batch_size"), maximum=MAX_BATCH)
    if merged.get("sim_threads") is not None:
        positive_int(merged["sim_threads"], where("sim_threads"), minimum=0, maximum=MAX_CPU_ID + 1)
    for key in merged["env"]:
        if not ENV_NAME.fullmatch(str(key)):
            raise PlanError(f"{where('env')}: {shown(key)} is not an environment variable name")
    for name, why in LOCK_FOLDER_ENV.items():
        if name in merged["env"]:
            raise PlanError(f"{where('env')}: {name} is {why}: set it where snakemake runs")
    owned = sorted(set(merged["env"]) & LAUNCHER_ENV)
    if owned:  # RANK/WORLD_SIZE: the trainer would wait for ranks of an external launcher that never come
        raise PlanError(f"{where('env')}: {owned[0]} is set by the trainer's launcher (devices and ranks come "
                        "from the run configuration: devices, cuda_visible_devices); leave it out")
    for name in sorted(set(merged["env"]) & COMPILE_OFF_ENV):
        if str(merged["env"][name]) not in ("", "0"):
            raise PlanError(f"{where('env')}: {name} turns torch.compile off behind the run's record (which says "
                            "--compile); to train uncompiled, use overrides: {compile: false}")
    for name in sorted(set(merged["env"]) & THREAD_COUNT_ENV):
        value = str(merged["env"][name])
        if not (value.isascii() and value.isdigit() and 0 < int(value) <= MAX_CPU_ID + 1):
            raise PlanError(f"{where('env')}: {name} must be a whole number of threads in [1, {MAX_CPU_ID + 1}], "
                            f"got {shown(value)}")
    check_run_env(merged["env"], where("env"), starts)


def check_run_env(env: dict, where: str, starts: tuple[str, ...] = (), command: str = "sacscale") -> None:
    """PlanError naming `where` for a run environment that would put another user's code into
    the run (LD_PRELOAD, a folder on PYTHONPATH others may write, ...) or stop its `command`
    from starting; the run configurations' env here, record-run's --env as given by hand."""
    # every path a value names is judged before an interpreter is started with them
    check_code_paths(env, where, starts)
    check_temporary_folders(env, where)
    check_interpreter_env(env, where, command)


def _check_reference_run(merged: dict, kind: str, where) -> None:
    """A unilab run: CUDA devices, none of our trainer's settings, the reference's Hydra keys."""
    if kind != "cuda":
        raise PlanError(f"{where('devices')}: the reference trainer (trainer: unilab) trains on CUDA devices "
                        "only (its replay and learner need CUDA)")
    for key in ("sim_threads", "trace"):
        if merged.get(key):
            raise PlanError(f"{where(key)}: not a setting of the reference trainer (trainer: unilab); "
                            "leave it out or false")
    for key, value in merged["overrides"].items():
        check_reference_override(str(key), value, where(f"overrides.{key}"))


def _check_our_overrides(merged: dict, where) -> None:
    for key, value in merged["overrides"].items():
        check_override(str(key), value, where(f"overrides.{key}"))
    check_trainer_values(merged, where)
