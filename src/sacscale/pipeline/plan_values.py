"""The plan's value checks: names, bounds and spellings every part of the planner shares.

Every problem raises `PlanError`, whose message starts with the config key to fix.
"""

from __future__ import annotations

import re

from sacscale.analysis.record_shapes import MAX_REPEATS as MAX_REPEATS  # where metrics are read too
from sacscale.cpus import MAX_CPU_ID, CpuRangeError, format_cpu_list, named_twice, parse_cpu_list
from sacscale.number_kinds import MAX_WAIT_S
from sacscale.train.config import MAX_ITERATIONS
from sacscale.usage import printable

# Names become directory names and shell words: matched in full (a `^...$` search lets a
# trailing newline through), 64 characters at most so `{prefix}_r{k}_{config}` fits a path.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
DEVICES = re.compile(r"cpu(,cpu){0,63}|[0-9]{1,3}(,[0-9]{1,3}){0,63}")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
# The spelling the config allows for a CPU list (no blanks, at most 5 digits an id, 1024
# items); sacscale.cpus parses it and bounds its ranges.
CPU_LIST = re.compile(r"[0-9]{1,5}(-[0-9]{1,5})?(,[0-9]{1,5}(-[0-9]{1,5})?){0,1023}")
# Upper bounds, checked before anything is expanded: a CPU list becomes a list of every
# CPU, repeats x order becomes the run list.
MAX_ORDER = 64  # run configurations a repeat
# runs a set (repeats x configurations): the presets plan 10 to 20, a long learning set a few
# hundred; 1,000 runs of even the CPU preset's minute each take most of a day
MAX_RUNS = 1000
MAX_NUM_ENVS = 1 << 20
MAX_BATCH = 1 << 24
MAX_TIMEOUT_S = MAX_WAIT_S  # a run's wall clock: the bound of its trainer's own waits too
MIN_TIMEOUT_S = 1.0  # below it nothing starts (1e-320 is a number, not a limit)
# The trainer probe's learner first updates in its tenth iteration (at the probe's sizes,
# sacscale.train.probe.fewest_iterations; a test holds the two equal): fewer compare nothing.
PROBE_FEWEST_ITERATIONS = 10
RUN_FIELDS = (
    "trainer", "devices", "cpu_pools", "num_envs", "batch_size", "sim_threads", "log_every",
    "trace", "timeout_s", "cuda_visible_devices", "env", "overrides", "description",
)
# sacscale: ours (`sacscale train`); unilab: the reference trainer (`sacscale train-reference`,
# unilab 1.5.2 in its own environment). Both write run directories analyze-run reads alike.
TRAINERS = ("sacscale", "unilab")


class PlanError(ValueError):
    """A configuration problem; the message starts with the offending key."""


def config_key(origin: str, key: str) -> str:
    """The key as the user would look it up: in the config, or in a preset (origin)."""
    return key if origin == "config" else f"{key} (preset {origin})"


def run_field_key(name: str, layers: list[tuple[dict, str, str]], origin: str):
    """`where(field)` for run configuration `name` (its entry from `origin`): the key that sets
    `field` ("num_envs", "overrides.extra"; "" the configuration itself), as the user would look
    it up. `layers`: (fields, "run_configs.<name>" or "run_defaults", their origin), the one that
    wins first, as sacscale.pipeline.run_merge merges them: the first that gives the field
    (overrides and env key by key) sets it; one none gives is the entry's."""
    def where(field: str = "") -> str:
        top, _, sub = field.partition(".")
        nested = top in ("overrides", "env") and sub != ""
        if field:
            for fields, key, source in layers:
                if _gives(fields, top, sub, nested):
                    return config_key(source, f"{key}.{field}")
        return config_key(origin, f"run_configs.{name}" + (f".{field}" if field else ""))
    return where


def _gives(fields, top: str, sub: str, nested: bool) -> bool:
    if not isinstance(fields, dict):
        return False
    if not nested:
        return top in fields
    given = fields.get(top)  # an option's key spelled with - or _ alike (--replay-per-env)
    key = sub.split(".")[0].replace("-", "_")
    return isinstance(given, dict) and any(str(k).replace("-", "_") == key for k in given)


def shown(value) -> str:
    """A value quoted in a message, cut to 80 characters."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


PATH_MAX = 4096  # Linux's longest path: a longer value is no folder, and is cut in the message


def shown_path(path) -> str:
    """A path quoted in a message: whole (the folder it names is what the reader must find),
    but cut as any value where it is longer than a path can be."""
    text = str(path)
    return repr(text) if len(text) <= PATH_MAX else shown(text)


def _digits(value: int) -> str:
    """A large integer for a message: its first digits and how many there are (repr fails
    past 4300 digits)."""
    digits = value.bit_length() * 0.30103
    return repr(value) if digits < 30 else f"a number of about {digits:.0f} digits"


def positive_int(value, key: str, minimum: int = 1, maximum: int = MAX_ITERATIONS) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise PlanError(f"{key}: must be an integer >= {minimum}, got {shown(value)}")
    if value > maximum:  # checked before the value sizes anything
        raise PlanError(f"{key}: must be an integer >= {minimum} and <= {maximum}, got {_digits(value)}")
    return value


def seconds(value, key: str, default: float) -> float:
    value = default if value is None else value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not MIN_TIMEOUT_S <= value <= MAX_TIMEOUT_S:
        raise PlanError(f"{key}: must be a number of seconds in [{MIN_TIMEOUT_S:g}, {MAX_TIMEOUT_S}], "
                        f"got {value!r}")
    return float(value)


def parse_pool(text, key: str) -> list[int]:
    """A CPU list of the config, checked for its spelling, then parsed (sacscale.cpus refuses a
    range past CPU MAX_CPU_ID before expanding it: '0-4000000000' is not four billion CPUs)."""
    if not isinstance(text, str) or not CPU_LIST.fullmatch(text):
        raise PlanError(f"{key}: {shown(text)} is not a CPU list such as '8-39' or '0,2-5'")
    try:
        cpus, twice = parse_cpu_list(text, max_id=MAX_CPU_ID), named_twice(text)
    except CpuRangeError as exc:
        raise PlanError(f"{key}: {exc.part!r}: CPUs are numbered 0-{MAX_CPU_ID}, ranges low-high") from None
    except ValueError as exc:
        raise PlanError(f"{key}: {exc}") from None
    if twice:  # the trainer refuses it (--collector-cpu-ids): refused here, before any run
        raise PlanError(f"{key}: {shown(text)} names CPU(s) {format_cpu_list(twice)} twice; name each CPU once")
    return cpus


def merged_value(preset: dict, config: dict, key: str, preset_name: str):
    """(value, origin): the config's value when given (not None), else the preset's."""
    if config.get(key) is not None:
        return config[key], "config"
    return preset.get(key), preset_name


def matrix_named(message: str, preset: str, matrix_file: str) -> str:
    """A plan error's message with the recorded matrix (config planner.matrix) named where it
    speaks of the preset planned from it: its run configurations, order and pairs come from
    that file, and the reader must find the file, not the preset."""
    source = f"from planner.matrix {printable(str(matrix_file))}"
    message = message.replace(f"(preset {preset})", f"(preset {preset}, {source})")
    if message.startswith("planner: "):  # the matrix's shape (sacscale.parallel.matrix)
        message = f"planner.matrix {printable(str(matrix_file))}: {message.removeprefix('planner: ')}"
    return message
