"""The pipeline's run plan: a preset plus the user's config, resolved and checked.

`resolve(config, presets)` turns the validated `config.yaml` (see
`workflow/schemas/config.schema.yaml`) and the named presets (`workflow/presets.yaml`)
into a `Plan`: which preset (and why), the run set's name, every run configuration with
its defaults filled in, and the runs in execution order
(`{prefix}_r{k}_{config}`, k = 1..repeats; within each repeat the configurations run in
`order` or reversed, counterbalanced ABBA BAAB..., see `repeat_order`; both configurations
of repeat k use seed `seed + k - 1`).
Every problem raises `PlanError` naming the key, before any rule runs.

Merging: a key given in the config (not null) replaces the preset's; `run_configs`
entries are merged by name (the config's fields replace the preset's fields of that
entry; new names are added); `run_defaults` and `probe` are merged field by field.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
from dataclasses import asdict, dataclass, field

from sacscale.parallel.topology import TopologyError, pools_off_node, preset_from_matrix
from sacscale.cpus import available_cpus, first_overlap, format_cpu_list, parse_cpu_list

# Names become directory names and shell words: matched in full (a `^...$` search lets a
# trailing newline through), 64 characters at most so `{prefix}_r{k}_{config}` fits a path.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
DEVICES = re.compile(r"cpu(,cpu){0,63}|[0-9]{1,3}(,[0-9]{1,3}){0,63}")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
CPU_LIST = re.compile(r"[0-9]{1,5}(-[0-9]{1,5})?(,[0-9]{1,5}(-[0-9]{1,5})?){0,1023}")
# Upper bounds, checked before anything is expanded: a CPU list becomes a list of every
# CPU, repeats x order becomes the run list (the Linux kernel supports at most 8192 CPUs).
MAX_CPU_ID = 8191
MAX_REPEATS = 1000
MAX_ITERATIONS = 10**9
MAX_NUM_ENVS = 1 << 20
MAX_BATCH = 1 << 24
MAX_TIMEOUT_S = 30 * 86400
RUN_FIELDS = (
    "trainer", "devices", "cpu_pools", "num_envs", "batch_size", "sim_threads", "log_every",
    "trace", "timeout_s", "cuda_visible_devices", "env", "overrides", "description",
)
# sacscale: ours (`sacscale train`); unilab: the reference trainer (`sacscale train-reference`,
# unilab 1.5.2 in its own environment). Both write run directories analyze-run reads alike.
TRAINERS = ("sacscale", "unilab")


class PlanError(ValueError):
    """A configuration problem; the message starts with the offending key."""


# --- the machine -----------------------------------------------------------------------

@dataclass
class Host:
    cuda_devices: int
    cpus: frozenset[int]

    @classmethod
    def detect(cls) -> "Host":
        return cls(cuda_devices=visible_cuda_devices(), cpus=frozenset(available_cpus()))


def visible_cuda_devices() -> int:
    """CUDA devices this process would see, without importing torch (cheap, parse time)."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None and env.strip() in ("", "-1"):
        return 0
    smi = shutil.which("nvidia-smi")
    if not smi:
        return 0
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    count = sum(1 for line in out.splitlines() if line.startswith("GPU "))
    if env is not None:
        count = min(count, len([d for d in env.split(",") if d.strip()]))
    return count


# --- the plan --------------------------------------------------------------------------

@dataclass
class RunConfig:
    name: str
    devices: str
    world_size: int
    device_kind: str                  # "cpu" or "cuda"
    cpu_pools: str                    # "auto" or one CPU list per rank joined by ";"
    num_envs: int
    batch_size: int | None = None
    sim_threads: int | None = None
    log_every: int = 10
    trace: bool = False
    timeout_s: float = 3600.0
    cuda_visible_devices: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    overrides: dict = field(default_factory=dict)
    description: str = ""
    trainer: str = "sacscale"

    def gpus_needed(self) -> int:
        if self.device_kind != "cuda":
            return 0
        return max(int(d) for d in self.devices.split(",")) + 1

    def pool_cpus(self) -> list[list[int]]:
        return [] if self.cpu_pools == "auto" else [parse_cpu_list(p) for p in self.cpu_pools.split(";")]


@dataclass
class Run:
    name: str
    config: str
    repeat: int
    seed: int
    index: int                        # position in the execution order, from 0


@dataclass
class Plan:
    preset: str
    preset_reason: str
    run_set: str
    prefix: str
    repeats: int
    iterations: int
    seed: int
    order: list[str]
    schedule: str
    execution_order: list[str]
    run_configs: dict[str, RunConfig]
    runs: list[Run]
    pairs: list[tuple[str, str]]
    probe: dict
    model_timeout_s: float
    matrix: dict | None = None        # the planned matrix the run configurations came from
    model: dict = field(default_factory=dict)
    description: str = ""

    def run(self, name: str) -> Run:
        for r in self.runs:
            if r.name == name:
                return r
        raise KeyError(name)

    def previous(self, name: str) -> Run | None:
        i = self.run(name).index
        return self.runs[i - 1] if i else None

    def gpus_needed(self) -> int:
        probe_gpus = 0
        if not str(self.probe["devices"]).startswith("cpu"):
            probe_gpus = max(int(d) for d in str(self.probe["devices"]).split(",")) + 1
        return max([probe_gpus] + [self.run_configs[c].gpus_needed() for c in self.order])

    def as_dict(self) -> dict:
        data = asdict(self)
        data["pairs"] = [list(p) for p in self.pairs]
        if data["matrix"] is None:
            del data["matrix"]  # plans of named presets stay as they were recorded
        return data


SCHEDULES = ("counterbalanced", "alternating")


def repeat_order(order: list[str], repeat: int, schedule: str = "counterbalanced") -> list[str]:
    """The configurations of repeat `repeat` (from 1) in the order they run.

    counterbalanced: `order` reversed on the repeats where the Thue-Morse sequence is 1
    (AB BA BA AB BA AB AB BA ...: ABBA BAAB), so slow drift of the machine favours no
    configuration: each position is taken equally often by each configuration over every
    2 repeats and linear drift cancels over every 4. alternating: `order` every repeat
    (ABAB; what the sets made before 2026-12-01 used).
    """
    if schedule == "alternating":
        return list(order)
    flipped = bin(repeat - 1).count("1") % 2 == 1
    return list(reversed(order)) if flipped else list(order)


def _key(origin: str, key: str) -> str:
    """The key as the user would look it up: in the config, or in a preset (origin)."""
    return key if origin == "config" else f"{key} (preset {origin})"


def _positive_int(value, key: str, minimum: int = 1, maximum: int = MAX_ITERATIONS) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise PlanError(f"{key}: must be an integer >= {minimum}, got {_shown(value)}")
    if value > maximum:  # checked before the value sizes anything
        raise PlanError(f"{key}: must be an integer >= {minimum} and <= {maximum}, got {value!r}")
    return value


def _seconds(value, key: str, default: float) -> float:
    value = default if value is None else value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= MAX_TIMEOUT_S:
        raise PlanError(f"{key}: must be a number of seconds in (0, {MAX_TIMEOUT_S}], got {value!r}")
    return float(value)


def check_cpu_list(text: str, key: str) -> None:
    """A CPU list's form and size, before parse_cpu_list expands it: '0-4000000000' would
    otherwise be a list of four billion CPUs."""
    if not isinstance(text, str) or not CPU_LIST.fullmatch(text):
        raise PlanError(f"{key}: {_shown(text)} is not a CPU list such as '8-39' or '0,2-5'")
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        if int(hi or lo) > MAX_CPU_ID or int(lo) > int(hi or lo):
            raise PlanError(f"{key}: {part!r}: CPUs are numbered 0-{MAX_CPU_ID}, ranges low-high")


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _merge(preset: dict, config: dict, key: str, preset_name: str):
    """(value, origin): the config's value when given (not None), else the preset's."""
    if config.get(key) is not None:
        return config[key], "config"
    return preset.get(key), preset_name


def choose_preset(config: dict, presets_doc: dict, host: Host, matrix=None) -> tuple[str, str]:
    """(preset name, why). `matrix`: a callable giving the planned matrix (see resolve)."""
    presets = presets_doc.get("presets", {})
    name = config.get("preset") or "auto"
    if name != "auto":
        if name not in presets:
            raise PlanError(f"preset: unknown preset {name!r} (known: auto, {', '.join(sorted(presets))})")
        return name, "named in the config"
    auto = presets_doc.get("auto", {})
    fallback = auto.get("no_cuda", "cpu")
    if host.cuda_devices == 0:
        return fallback, "preset auto: no CUDA device visible, so the CPU preset"
    seen = f"{host.cuda_devices} CUDA device(s) and CPUs {format_cpu_list(host.cpus)} visible"
    smaller, rejected = [], []
    for candidate in auto.get("cuda", []):
        try:
            plan = resolve({**config, "preset": candidate}, presets_doc, host)
        except PlanError:
            continue
        needed = plan.gpus_needed()
        if needed < host.cuda_devices:
            smaller.append(candidate)
        elif needed == host.cuda_devices:
            known, off_node = _off_node(plan, matrix)
            if off_node:
                rejected.append(f"{candidate}: {off_node}")
                continue
            return candidate, (
                f"preset auto: {seen}; {candidate} is the first preset in the auto list written for "
                "exactly this many GPUs whose CPU pools exist here"
                + (" and lie on their GPUs' NUMA nodes" if known else "")
            )
    # no named preset for exactly this machine: the matrix planned from its topology
    failed = ""
    if auto.get("planned") and matrix is not None:
        try:
            planned = matrix()
        except PlanError as exc:
            failed = f"; the topology planner failed ({exc})"
        else:
            why = "no preset in the auto list is written for exactly this many GPUs"
            if rejected:
                why += f" with its pools on its GPUs' NUMA nodes ({'; '.join(rejected)})"
            return auto["planned"], (
                f"preset auto: {seen}; {why}, so the matrix planned from this machine's topology: "
                f"{planned.get('reason', '')}"
            )
    if smaller:
        return smaller[0], (
            f"preset auto: {seen}; {smaller[0]} is the first preset in the auto list that fits "
            f"(with fewer GPUs){failed}"
        )
    return fallback, (
        f"preset auto: {host.cuda_devices} CUDA device(s) visible but no GPU preset fits this machine's CPUs"
        f"{failed}; the CPU preset"
    )


def _once(matrix):
    """The matrix source (a dict, a callable giving one, or None) as a callable that asks it
    at most once (a failure is kept and raised again)."""
    if matrix is None:
        return None
    kept = []

    def get() -> dict:
        if not kept:
            try:
                kept.append((matrix() if callable(matrix) else matrix, None))
            except PlanError as exc:
                kept.append((None, exc))
        if kept[0][1] is not None:
            raise kept[0][1]
        return kept[0][0]

    return get


def _off_node(plan: "Plan", matrix) -> tuple[bool, str | None]:
    """(topology known, where the plan puts a pool off its GPU's NUMA node, or None)."""
    try:
        topo = matrix() if matrix is not None else None
    except PlanError:
        return False, None  # no planner, or it failed: nothing to check against
    configs = []
    for name in plan.order:
        rc = plan.run_configs[name]
        # under its own CUDA_VISIBLE_DEVICES a configuration's indices are not the planner's
        if rc.device_kind == "cuda" and rc.cpu_pools != "auto" and rc.cuda_visible_devices is None:
            configs.append((name, [int(d) for d in rc.devices.split(",")], rc.pool_cpus()))
    return pools_off_node(topo, configs)


# Trainer options the pipeline sets itself (and records in plan.json and run.json): an
# override may not change them behind the record's back. -> where the value comes from.
PIPELINE_OWNED = {
    "devices": "the run configuration's devices",
    "num_envs": "the run configuration's num_envs",
    "batch_size": "the run configuration's batch_size",
    "sim_threads": "the run configuration's sim_threads",
    "collector_cpu_ids": "the run configuration's cpu_pools",
    "log_every": "the run configuration's log_every",
    "trace": "the run configuration's trace",
    "iterations": "the plan's iterations",
    "seed": "the plan's seed (repeat k runs seed + k - 1)",
    "log_dir": "the pipeline (results/<run set>/runs/<run>)",
    "model": "the pipeline's prepared, hashed model (config model.from_mjb)",
    "resume": "the pipeline (every run of a set starts fresh in its own directory)",
}


def check_override(key: str, value, where: str) -> None:
    """`key` must be exactly one of the trainer's own options (its parser is the one source
    of truth; no abbreviations, no invented names) and not one the pipeline owns."""
    from sacscale.train.options import option_names

    options = option_names()
    flag = _option(key, value)[:1]
    positive = "--" + key.replace("_", "-")
    if positive not in options or (flag and flag[0] not in options):
        shown = sorted(o for o in options if not o.startswith("--no-"))
        raise PlanError(f"{where}: not an option of `sacscale train` (exact names only: {', '.join(shown)})")
    dest = options[positive]
    if dest in PIPELINE_OWNED:
        raise PlanError(f"{where}: set by the pipeline from {PIPELINE_OWNED[dest]}; not an override")


def check_trainer_values(merged: dict, where) -> None:
    """The overrides' values as `sacscale train` would parse and check them (types, finite
    numbers, `--extra` a JSON object of valid learner settings), at planning time and
    naming the config key, rather than when the run starts hours into the pipeline."""
    import argparse

    from sacscale.train.options import build_parser
    from sacscale.train import TrainConfig, TrainingError

    parser = build_parser()
    parser.exit_on_error = False
    values = {}
    for key, value in merged["overrides"].items():
        here = where(f"overrides.{key}")

        def refuse(message: str, here=here):  # argparse's error() would print usage and exit
            raise PlanError(f"{here}: {message}")

        parser.error = refuse
        try:
            parsed = vars(parser.parse_args(_option(key, value)))
        except argparse.ArgumentError as exc:
            refuse(str(exc))
        dest = key.replace("-", "_")
        if isinstance(parsed.get(dest), float) and not math.isfinite(parsed[dest]):
            raise PlanError(f"{where(f'overrides.{key}')}: {_shown(value)} is not a finite number")
        values[dest] = parsed.get(dest)
    if not values:
        return
    sizes = {k: merged[k] for k in ("num_envs", "batch_size") if merged.get(k) is not None}
    cfg = TrainConfig(**{**sizes, "devices": str(merged.get("devices", "cpu")), **values})
    try:
        cfg.validate()  # the trainer's own checks of its options (choices, ranges), no file or device
    except TrainingError as exc:
        raise PlanError(f"{_override_key(str(exc), merged['overrides'], where)}: {exc}") from None
    if "extra" not in values:
        return
    extra_key = where(f"overrides.{next(k for k in merged['overrides'] if k.replace('-', '_') == 'extra')}")
    from sacscale.checks import InputError
    from sacscale.train import sac_config

    try:
        sac_config(cfg)
    except (TrainingError, InputError, TypeError, ValueError) as exc:
        raise PlanError(f"{extra_key}: {exc}") from None


def _override_key(message: str, overrides: dict, where) -> str:
    """The config key behind a trainer error (`--env-pipeline must be ...`): the override that
    set the flag it names, else the run configuration's overrides."""
    flag = re.match(r"--([a-z][a-z0-9-]*)", message)
    for key in overrides:
        if flag and key.replace("_", "-") == flag.group(1):
            return where(f"overrides.{key}")
    return where("overrides")


# Hydra keys of the reference trainer that `sacscale train-reference` sets from the run
# configuration (trainers.unilab.hydra_overrides): overrides may not change them.
REFERENCE_OWNED = ("task", "algo.num_envs", "algo.max_iterations", "algo.seed", "algo.batch_size",
                   "training.log_root", "training.logger", "training.no_play", "training.export_onnx",
                   "training.trace_enabled", "env.scene.model_file", "env.cpu_ids", "training.dp_collector_cpu_ids")
HYDRA_KEY = re.compile(r"\+{0,2}~?[A-Za-z_][A-Za-z0-9_]{0,63}(\.[A-Za-z0-9_]{1,64}){0,16}")


def check_reference_override(key: str, value, where: str) -> None:
    """An override of a unilab run is one of the reference's Hydra keys (`algo.gamma`),
    passed as `--override KEY=VALUE`; the reference's own Hydra rejects unknown keys when
    the run starts, before anything trains. The keys the pipeline sets are refused here."""
    if not HYDRA_KEY.fullmatch(key) or "." not in key:
        raise PlanError(f"{where}: a unilab run's overrides are the reference's Hydra keys (e.g. algo.gamma), "
                        f"got {key!r}")
    if key.lstrip("+~") in REFERENCE_OWNED:
        raise PlanError(f"{where}: set by the pipeline from the run configuration; not an override")
    if isinstance(value, (dict, list)):
        raise PlanError(f"{where}: give a single value (Hydra's own syntax in a string for lists)")


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


def _resolve_run_config(name: str, entry: dict, defaults: dict, origin: str, host: Host | None) -> RunConfig:
    def where(field: str = "") -> str:
        return _key(origin, f"run_configs.{name}" + (f".{field}" if field else ""))

    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise PlanError(f"{where()}: configuration names may hold letters, digits, '_', '.', '-' only")
    unknown = sorted(set(entry) - set(RUN_FIELDS))
    if unknown:
        raise PlanError(f"{where(unknown[0])}: unknown field (known: {', '.join(RUN_FIELDS)})")
    merged = {**defaults, **entry}
    merged["overrides"] = {**(defaults.get("overrides") or {}), **(entry.get("overrides") or {})}
    merged["env"] = {k: str(v) for k, v in {**(defaults.get("env") or {}), **(entry.get("env") or {})}.items()}

    devices = str(merged.get("devices", "")).replace(" ", "")
    if not DEVICES.fullmatch(devices):
        raise PlanError(f"{where('devices')}: {devices!r} is not 'cpu', 'cpu,cpu', '0' or '0,1'-style")
    ranks = devices.split(",")
    kind = "cpu" if ranks[0] == "cpu" else "cuda"
    if kind == "cuda" and len(set(ranks)) != len(ranks):
        _check_shared_gpu(merged, devices, where)

    pools = merged.get("cpu_pools", "auto")
    if pools in (None, "auto"):
        pools_arg = "auto"
    else:
        items = pools.split(";") if isinstance(pools, str) else [str(p) for p in pools]
        if len(items) != len(ranks):
            raise PlanError(
                f"{where('cpu_pools')}: {len(items)} CPU list(s) for {len(ranks)} rank(s) (devices {devices!r}); "
                "give one list per rank, or 'auto'"
            )
        parsed = []
        for rank, item in enumerate(items):
            check_cpu_list(item, f"{where('cpu_pools')}: rank {rank}")
            try:
                cpus = parse_cpu_list(item)
            except ValueError as exc:
                raise PlanError(f"{where('cpu_pools')}: rank {rank}: {exc}") from exc
            parsed.append(cpus)
        overlap = first_overlap(parsed)
        if overlap:
            a, b, shared = overlap
            raise PlanError(
                f"{where('cpu_pools')}: the pools of ranks {a} and {b} overlap on CPUs {format_cpu_list(shared)}"
            )
        if host is not None:
            for rank, cpus in enumerate(parsed):
                absent = set(cpus) - set(host.cpus)
                if absent:
                    raise PlanError(
                        f"{where('cpu_pools')}: rank {rank} names CPUs {format_cpu_list(absent)} that do not exist "
                        f"on this machine (CPUs available to this process: {format_cpu_list(host.cpus)})"
                    )
        pools_arg = ";".join(format_cpu_list(c) for c in parsed)

    _positive_int(merged.get("num_envs"), where("num_envs"), maximum=MAX_NUM_ENVS)
    _positive_int(merged.get("log_every"), where("log_every"))
    if merged.get("batch_size") is not None:
        _positive_int(merged["batch_size"], where("batch_size"), maximum=MAX_BATCH)
    if merged.get("sim_threads") is not None:
        _positive_int(merged["sim_threads"], where("sim_threads"), minimum=0, maximum=MAX_CPU_ID + 1)
    for key in merged["env"]:
        if not ENV_NAME.fullmatch(str(key)):
            raise PlanError(f"{where('env')}: {_shown(key)} is not an environment variable name")
    if (merged.get("trainer") or "sacscale") == "sacscale":
        _check_batch_fits_replay(merged, where)  # ours; the reference sizes its own replay
    timeout = _seconds(merged.get("timeout_s", 3600), where("timeout_s"), 3600)
    trainer = merged.get("trainer") or "sacscale"
    if trainer not in TRAINERS:
        raise PlanError(f"{where('trainer')}: {trainer!r} is not one of {', '.join(TRAINERS)}")
    if trainer == "unilab":
        if kind != "cuda":
            raise PlanError(f"{where('devices')}: the reference trainer (trainer: unilab) trains on CUDA devices "
                            "only (its replay and learner need CUDA)")
        for key in ("sim_threads", "trace"):
            if merged.get(key):
                raise PlanError(f"{where(key)}: not a setting of the reference trainer (trainer: unilab); "
                                "leave it out or false")
        for key, value in merged["overrides"].items():
            check_reference_override(str(key), value, where(f"overrides.{key}"))
    else:
        for key, value in merged["overrides"].items():
            check_override(str(key), value, where(f"overrides.{key}"))
        check_trainer_values(merged, where)
    return RunConfig(
        name=name,
        devices=devices,
        world_size=len(ranks),
        device_kind=kind,
        cpu_pools=pools_arg,
        num_envs=merged["num_envs"],
        batch_size=merged.get("batch_size"),
        sim_threads=merged.get("sim_threads"),
        log_every=merged["log_every"],
        trace=bool(merged.get("trace", False)),
        timeout_s=float(timeout),
        cuda_visible_devices=None if merged.get("cuda_visible_devices") is None else str(merged["cuda_visible_devices"]),
        env=merged["env"],
        overrides=merged["overrides"],
        description=str(merged.get("description", "")),
        trainer=trainer,
    )


def _check_run_set_folders(run_set: str) -> None:
    """results/<run_set> and reports/<run_set> must be folders or absent (e.g. results/README.md
    is a committed file, not a set)."""
    for folder in ("results", "reports"):
        path = os.path.join(folder, run_set)
        if os.path.lexists(path) and (os.path.islink(path) or not os.path.isdir(path)):
            raise PlanError(f"run_set: {folder}/{run_set} exists and is not a run set's folder; choose another name")


def resolve(config: dict, presets_doc: dict, host: Host | None = None, check_host: bool = True,
            matrix=None) -> Plan:
    """The checked plan. `host=None` detects the machine; `check_host=False` skips the
    checks that depend on it (CPUs that exist), e.g. when planning on a cluster's login node.
    `matrix`: the `sacscale plan-matrix` output (or a callable giving it, asked only when
    needed) for the preset named by `auto.planned`; None: that preset is not available."""
    from sacscale.pipeline.config_check import ConfigError, check_values

    try:
        check_values(config)  # before anything is expanded: sizes, finite numbers, plain strings
    except ConfigError as exc:
        raise PlanError(str(exc)) from None
    if host is None:
        host = Host.detect()
    presets = presets_doc.get("presets", {})
    if not check_host:
        # Planning for another machine (a cluster's login node for its GPU node): a choice
        # made from this machine's GPUs or topology would be the wrong machine's.
        chosen = config.get("preset") or "auto"
        if chosen == "auto":
            raise PlanError("preset: auto chooses from the GPUs of the machine that plans; with host_checks: false "
                            "(planning for another machine, e.g. with profiles/slurm) name the preset: "
                            "--config preset=NAME (known: " + ", ".join(sorted(presets)) + ")")
        if chosen == presets_doc.get("auto", {}).get("planned") and not (config.get("planner") or {}).get("matrix"):
            raise PlanError(f"preset: {chosen} plans from the topology of the machine that plans; with host_checks: "
                            "false give the target machine's recorded matrix: planner: {matrix: FILE} "
                            "(`sacscale plan-matrix --output FILE` on that machine)")
    get_matrix = _once(matrix)
    name, reason = choose_preset(config, presets_doc, host, get_matrix)
    preset = presets[name]
    planned = None
    if name == presets_doc.get("auto", {}).get("planned"):
        if get_matrix is None:
            raise PlanError(f"preset: {name} takes its run configurations from `sacscale plan-matrix`; none was given")
        planned = get_matrix()
        try:
            preset = preset_from_matrix(preset, planned, name, config.get("order"))
        except TopologyError as exc:
            raise PlanError(str(exc)) from None
        if reason == "named in the config":
            reason += f"; the matrix planned from the topology: {planned.get('reason', '')}"

    prefix, origin = _merge(preset, config, "prefix", name)
    if not isinstance(prefix, str) or not NAME.fullmatch(prefix):
        raise PlanError(f"{_key(origin, 'prefix')}: {prefix!r} is not a valid name")
    run_set = config.get("run_set") or name
    if not isinstance(run_set, str) or not NAME.fullmatch(run_set):
        raise PlanError(f"run_set: {_shown(run_set)} is not a valid name (letters, digits, '_', '.', '-'; "
                        "at most 64)")
    if check_host:
        _check_run_set_folders(run_set)
    values = {}
    for key, top in (("repeats", MAX_REPEATS), ("iterations", MAX_ITERATIONS)):
        value, origin = _merge(preset, config, key, name)
        values[key] = _positive_int(value, _key(origin, key), maximum=top)
    seed, origin = _merge(preset, config, "seed", name)
    from sacscale.checks import MAX_SEED

    # repeat k runs seed + k - 1: the last repeat's seed must still be one the trainer takes
    seed = _positive_int(seed if seed is not None else 1, _key(origin, "seed"), 0, MAX_SEED - values["repeats"] + 1)

    defaults = {**(preset.get("run_defaults") or {}), **(config.get("run_defaults") or {})}
    unknown = sorted(set(defaults) - set(RUN_FIELDS))
    if unknown:
        raise PlanError(f"run_defaults.{unknown[0]}: unknown field (known: {', '.join(RUN_FIELDS)})")
    entries: dict[str, tuple[dict, str]] = {n: (dict(e or {}), name) for n, e in (preset.get("run_configs") or {}).items()}
    for n, e in (config.get("run_configs") or {}).items():
        base = entries.get(n, ({}, "config"))[0]
        entries[n] = ({**base, **(e or {})}, "config")

    order, origin = _merge(preset, config, "order", name)
    okey = _key(origin, "order")
    if not order or not isinstance(order, list):
        raise PlanError(f"{okey}: empty; list the run configurations to alternate")
    if len(order) > 64:
        raise PlanError(f"{okey}: {len(order)} run configurations; at most 64 a repeat")
    seen = set()
    for entry in order:
        if entry not in entries:
            raise PlanError(
                f"{okey}: {entry!r} has no run configuration (run_configs has: {', '.join(sorted(entries)) or 'none'})"
            )
        if entry in seen:
            raise PlanError(f"{okey}: {entry!r} is listed twice")
        seen.add(entry)

    cpu_host = host if check_host else None
    run_configs = {n: _resolve_run_config(n, entries[n][0], defaults, entries[n][1], cpu_host) for n in order}

    pairs_raw, origin = _merge(preset, config, "pairs", name)
    pairs = []
    for i, pair in enumerate(pairs_raw or []):
        pk = _key(origin, f"pairs[{i}]")
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise PlanError(f"{pk}: a pair is [baseline, compared], got {pair!r}")
        for c in pair:
            if c not in run_configs:
                raise PlanError(f"{pk}: {c!r} is not in order ({', '.join(order)})")
        pairs.append((pair[0], pair[1]))

    probe = {**(preset.get("probe") or {}), **(config.get("probe") or {})}
    probe.setdefault("devices", "cpu,cpu")
    probe.setdefault("iterations", 3)
    probe.setdefault("compile_loss", False)
    probe.setdefault("timeout_s", 1800)
    probe.setdefault("trainer_iterations", 0)
    if not DEVICES.fullmatch(str(probe["devices"])):
        raise PlanError(f"probe.devices: {_shown(probe['devices'])} is not 'cpu,cpu' or '0,1'-style")
    _positive_int(probe["iterations"], "probe.iterations", maximum=10**6)
    _positive_int(probe["trainer_iterations"], "probe.trainer_iterations", 0, 10**6)
    _seconds(probe["timeout_s"], "probe.timeout_s", 1800)

    model = {**(preset.get("model") or {}), **(config.get("model") or {})}
    if model.get("from_mjb") and check_host and not os.path.isfile(model["from_mjb"]):
        raise PlanError(f"model.from_mjb: {model['from_mjb']} does not exist")

    schedule, origin = _merge(preset, config, "schedule", name)
    schedule = schedule or "counterbalanced"
    if schedule not in SCHEDULES:
        raise PlanError(f"{_key(origin, 'schedule')}: {schedule!r} is not one of {', '.join(SCHEDULES)}")
    runs = []
    for k in range(1, values["repeats"] + 1):
        # Both configurations of repeat k run with the same seed (paired repeats).
        for c in repeat_order(order, k, schedule):
            runs.append(Run(name=f"{prefix}_r{k}_{c}", config=c, repeat=k, seed=seed + k - 1, index=len(runs)))

    return Plan(
        preset=name,
        preset_reason=reason,
        run_set=str(run_set),
        prefix=prefix,
        repeats=values["repeats"],
        iterations=values["iterations"],
        seed=seed,
        order=list(order),
        schedule=schedule,
        execution_order=[r.name for r in runs],
        run_configs=run_configs,
        runs=runs,
        pairs=pairs,
        probe=probe,
        model_timeout_s=_seconds(_merge(preset, config, "model_timeout_s", name)[0], "model_timeout_s", 1800),
        matrix=planned,
        model=model,
        description=str(preset.get("description", "")).strip(),
    )


def check_config(paths, config: dict) -> None:
    """Before the schema: each config file parsed again, strictly (a duplicate key, many
    YAML aliases, a file too large or not UTF-8 are errors naming the file), then the
    merged config's values (sacscale.pipeline.config_check). PlanError names the file or key."""
    from sacscale.pipeline.config_check import ConfigError, check_files, check_values

    try:
        check_files(paths)
        check_values(config)
    except ConfigError as exc:
        raise PlanError(str(exc)) from None


def config_error_line(error) -> str:
    """One line for a config that fails the schema (a jsonschema ValidationError): where, what,
    and for an unknown key the keys allowed there, instead of the whole schema."""
    where = ".".join(str(p) for p in error.absolute_path) or "config"
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = sorted((error.schema.get("properties") or {}).keys())
        unknown = sorted(set(error.instance) - set(allowed))
        what = f"{', '.join(map(repr, unknown))} was unexpected: " + (
            "not a config key" if where == "config" else f"not a key of {where}")
        return f"{what} (allowed: {', '.join(allowed)})" if allowed else what
    message = error.message if len(error.message) <= 200 else error.message[:197] + "..."
    return f"{where}: {message}"


def config_error_message(workflow_error) -> str:
    """Snakemake's "Error validating config file." with the ValidationError it wraps, as
    one line; any other error as it is."""
    from jsonschema.exceptions import ValidationError

    cause = workflow_error.__cause__ or workflow_error.__context__  # Snakemake keeps only its text in args
    if not isinstance(cause, ValidationError):
        return str(workflow_error)
    return f"Error validating config file: {config_error_line(cause)}"


def describe_run(plan: Plan, run: Run) -> str:
    """A run in a few words for the terminal, e.g. '1 CPU rank, 24 iterations, run 1 of 4'."""
    rc = plan.run_configs[run.config]
    n = rc.world_size
    what = (f"{n} CPU rank{'s' if n != 1 else ''}" if rc.device_kind == "cpu"
            else f"{n} GPU{'s' if n != 1 else ''}")
    if rc.cpu_pools != "auto":
        what += f", CPU pools {rc.cpu_pools}"
    if rc.trainer == "unilab":
        what = f"the reference trainer, {what}"
    return f"{what}, {plan.iterations} iterations, run {run.index + 1} of {len(plan.runs)}"


# --- commands --------------------------------------------------------------------------

def _option(key: str, value) -> list[str]:
    flag = "--" + str(key).replace("_", "-")
    if value is True:
        return [flag]
    if value is False:
        return ["--no-" + flag[2:]]
    if value is None:
        return []
    return [flag, str(value)]


def train_command(plan: Plan, run: Run, log_dir: str, model: str | None) -> list[str]:
    """The `sacscale train` (or, for `trainer: unilab`, `sacscale train-reference`) argv
    for one run (what the run rule executes)."""
    rc = plan.run_configs[run.config]
    if rc.trainer == "unilab":
        return reference_command(plan, run, log_dir)
    cmd = [
        "sacscale", "train",
        "--devices", rc.devices,
        "--num-envs", str(rc.num_envs),
        "--iterations", str(plan.iterations),
        "--collector-cpu-ids", rc.cpu_pools,
        "--seed", str(run.seed),
        "--log-dir", log_dir,
        "--log-every", str(rc.log_every),
    ]
    if model:
        cmd += ["--model", model]
    if rc.batch_size is not None:
        cmd += ["--batch-size", str(rc.batch_size)]
    if rc.sim_threads is not None:
        cmd += ["--sim-threads", str(rc.sim_threads)]
    if rc.trace:
        cmd += ["--trace"]
    for key, value in rc.overrides.items():
        cmd += _option(key, value)
    return cmd


def reference_command(plan: Plan, run: Run, log_dir: str) -> list[str]:
    """`sacscale train-reference` for a unilab run: the same devices, envs, iterations,
    seed and CPU pools ('auto': the reference's own default), its own scene (the
    pipeline's model is ours; the reference builds its task from its package)."""
    rc = plan.run_configs[run.config]
    cmd = [
        "sacscale", "train-reference",
        "--devices", rc.devices,
        "--num-envs", str(rc.num_envs),
        "--iterations", str(plan.iterations),
        "--collector-cpu-ids", "" if rc.cpu_pools == "auto" else rc.cpu_pools,
        "--seed", str(run.seed),
        "--log-dir", log_dir,
        "--timeout-s", str(rc.timeout_s),
    ]
    if rc.batch_size is not None:
        cmd += ["--override", f"algo.batch_size={rc.batch_size}"]
    for key, value in rc.overrides.items():
        text = str(value).lower() if isinstance(value, bool) else str(value)
        cmd += ["--override", f"{key}={text}"]
    return cmd


def run_environment(plan: Plan, run: Run) -> dict[str, str]:
    """Environment variables the run rule sets for the trainer (never invented here:
    CUDA_VISIBLE_DEVICES only when the run configuration names it)."""
    rc = plan.run_configs[run.config]
    env = dict(rc.env)
    if rc.cuda_visible_devices is not None:
        env["CUDA_VISIBLE_DEVICES"] = rc.cuda_visible_devices
    return env


def resolved_run(plan: Plan, run: Run) -> dict:
    """What run.json records as the run's resolved configuration."""
    rc = plan.run_configs[run.config]
    return {
        "run": run.name,
        "config": run.config,
        "repeat": run.repeat,
        "index": run.index,
        "seed": run.seed,
        "run_set": plan.run_set,
        "preset": plan.preset,
        "prefix": plan.prefix,
        "iterations": plan.iterations,
        **{k: v for k, v in asdict(rc).items() if k != "name"},
    }


def _check_batch_fits_replay(merged: dict, where) -> None:
    """What the trainer would refuse at start (sacscale.checks.check_sizes), found at
    planning time: the batch, and the default learning start, must fit in the replay."""
    from sacscale.train import TrainConfig

    overrides = {str(k).replace("-", "_"): v for k, v in merged.get("overrides", {}).items()}
    per_env = overrides.get("replay_per_env", TrainConfig.replay_per_env)
    batch = merged.get("batch_size") or overrides.get("batch_size", TrainConfig.batch_size)
    num_envs = merged.get("num_envs")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (per_env, batch, num_envs)):
        return  # the type errors are named elsewhere (or by the trainer)
    capacity = per_env * num_envs
    if batch > capacity:
        raise PlanError(f"{where('batch_size')}: {batch} is larger than the replay "
                        f"({per_env} rows per env x num_envs {num_envs} = {capacity} rows)")
    if 10 * num_envs > capacity and "extra" not in overrides:
        raise PlanError(f"{where('overrides.replay-per-env')}: {per_env} rows per env hold less than the "
                        f"learning start (10 x num_envs = {10 * num_envs} rows)")
