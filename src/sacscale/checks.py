"""Checks of `sacscale train`'s input that need more than the flags themselves: the
learner settings' types and ranges, sizes against each other, the model file, the log
directory, the shared memory the blocks will take. Each runs before anything is written
or started, and each error names the flag.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import tempfile
import zipfile
from dataclasses import fields
from pathlib import Path

from sacscale.atomic import file_kind, others_can_swap, others_can_write_file, refuse_foreign_links
from sacscale.collect import shm
from sacscale.held_names import unheld_path_problem
from sacscale.learner_limits import learner_size_problem
from sacscale.locks import TRAINER_LOCK, UntrustedLock, holder_beside, lock_file_beside
from sacscale.number_kinds import MAX_WAIT_S
from sacscale.task.walk_rules import ACTION_DIM, ACTOR_OBS_DIM, CRITIC_OBS_DIM

# Seeds feed numpy, torch and MuJoCo, offset per rank (+1000 r) and per stream (+7919).
MAX_SEED = 2**31 - 100_000


class InputError(RuntimeError):
    """Bad input, found before the run starts; the message names the flag."""


def seed_arg(text: str) -> int:
    """An argparse type for a command's --seed that had no range check of its own: numpy
    refuses a negative seed and MuJoCo or torch one past 32 bits, naming no option."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text[:40]!r}: not a whole number") from None
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"{text[:40]!r}: a seed is a whole number in [0, {MAX_SEED}]")
    return value


def wait_problem(seconds: float, flag: str) -> str | None:
    """Why `seconds` is no wait `flag` may ask for (NaN included), or None."""
    if not 0 < seconds <= MAX_WAIT_S:
        return f"{flag} must be a number of seconds in (0, {MAX_WAIT_S}] (30 days), got {seconds!r}"
    return None


def finite_float(text: str) -> float:
    """An argparse type for a number of seconds or a width without a range check that
    names nan: nan and inf passed float() and failed later (`cannot convert float NaN to
    integer`, naming no option)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text[:40]!r}: not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text[:40]!r}: not a finite number")
    return value


def int_in(low: int, high: int):
    """An argparse type for a count with bounds (a step or thread count of 0 or below ended in
    a ZeroDivisionError after the work's first file was written)."""
    def whole_number(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text[:40]!r}: not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text[:40]!r}: must be {low}..{high}")
        return value

    return whole_number


# --------------------------------------------------------------------------------------
# Learner settings (SACConfig fields, from --extra and the sizes of TrainConfig)


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v) -> bool:
    return (_is_int(v) or isinstance(v, float)) and math.isfinite(v)


def _int_tuple(v, length=None) -> bool:
    return isinstance(v, (list, tuple)) and (length is None or len(v) == length) and all(_is_int(x) for x in v)


def _number_tuple(v, length=None) -> bool:
    return isinstance(v, (list, tuple)) and (length is None or len(v) == length) and all(_is_number(x) for x in v)


# annotation (as written in SACConfig) -> (check, what it must be). Not pydantic (2.14 tried for this):
# its strict adapters refuse a JSON list for a tuple and word every error 'Input should be ...', so
# keeping these messages would take a table from its error types back to them, as long as this one,
# plus a dependency for the trainer.
_TYPES = {
    "int": (_is_int, "an integer"),
    "float": (_is_number, "a finite number"),
    "bool": (lambda v: isinstance(v, bool), "true or false"),
    "str": (lambda v: isinstance(v, str), "a string"),
    "int | None": (lambda v: v is None or _is_int(v), "an integer or null"),
    "tuple[int, ...]": (_int_tuple, "a list of integers"),
    "tuple[float, float]": (lambda v: _number_tuple(v, 2), "a list of 2 numbers"),
}

# Bounds of the sizes a learner could mean. A hidden layer of 16,384 units is 21x the
# reference's widest (768): a pair of them holds 2.7e8 weights (1 GiB in float32, 3 GiB with
# AdamW's moments) and each activation 512 MiB at batch 8192; past it torch's allocator failed,
# naming no setting. 16 layers: 5x the reference's depth.
MAX_HIDDEN, MAX_LAYERS = 16_384, 16
# C51 atoms: the critic's output and each projection tensor is (batch x atoms); 4,096 is 40x
# the reference's 101 (C51's papers use 51) and 128 MiB a tensor at batch 8192.
MAX_ATOMS = 4_096
# One rank's batch and replay rows per env: about a million, as learner-bench bounds its own.
MAX_ROWS = 1 << 20
# Updates one iteration makes (each captured in the iteration's CUDA graph): 128x the reference's 8.
MAX_CRITIC_UPDATES = 1_024
# The return support's bound: 500x the reference's +-20, inside float16's range (65,504) for
# amp_dtype float16; a support of +-1e308 overflowed (v_max - v_min) to inf in the run.
MAX_RETURN = 1e4
# SAC's customary log-std limits: exp() of either stays far inside float16.
LOG_STD_BOUNDS = (-20.0, 2.0)
# The actor's mean is clamp(-m, m), its action tanh of it: below 0.1 the policy's mean action stays
# within a tenth of each joint's range whatever the state (1e-300: 0 for every input).
MEAN_CLIP_BOUNDS = (0.1, 100)
# A tanh-squashed policy's entropy is at most that of the uniform law on [-1, 1]^d, d ln 2 (20.1 nats for
# the task's 29 actions): a target above it drives alpha up without end. Below, -1000 nats.
MAX_TARGET_ENTROPY = ACTION_DIM * math.log(2)


def _sizes_ok(v) -> bool:
    return 1 <= len(v) <= MAX_LAYERS and all(1 <= h <= MAX_HIDDEN for h in v)


# Ranges where a wrong value would run silently (or fail late, naming no setting); (check, what
# it must be). Every numeric field of SACConfig has one (tests/faults/test_learner_value_ranges.py).
_RANGES = {
    "actor_obs_dim": (lambda v: v == ACTOR_OBS_DIM, f"the task's {ACTOR_OBS_DIM}"),
    "critic_obs_dim": (lambda v: v == CRITIC_OBS_DIM, f"the task's {CRITIC_OBS_DIM}"),
    "action_dim": (lambda v: v == ACTION_DIM, f"the task's {ACTION_DIM}"),
    "actor_hidden": (_sizes_ok, f"a list of 1 to {MAX_LAYERS} sizes in [1, {MAX_HIDDEN}]"),
    "critic_hidden": (_sizes_ok, f"a list of 1 to {MAX_LAYERS} sizes in [1, {MAX_HIDDEN}]"),
    "log_std_min": (lambda v: LOG_STD_BOUNDS[0] <= v <= LOG_STD_BOUNDS[1], f"in {list(LOG_STD_BOUNDS)}"),
    "log_std_max": (lambda v: LOG_STD_BOUNDS[0] <= v <= LOG_STD_BOUNDS[1], f"in {list(LOG_STD_BOUNDS)}"),
    "mean_clip": (lambda v: MEAN_CLIP_BOUNDS[0] <= v <= MEAN_CLIP_BOUNDS[1], f"in {list(MEAN_CLIP_BOUNDS)}"),
    "num_atoms": (lambda v: 2 <= v <= MAX_ATOMS, f"in [2, {MAX_ATOMS}]"),
    "v_min": (lambda v: -MAX_RETURN <= v <= MAX_RETURN, f"in [{-MAX_RETURN:g}, {MAX_RETURN:g}]"),
    "v_max": (lambda v: -MAX_RETURN <= v <= MAX_RETURN, f"in [{-MAX_RETURN:g}, {MAX_RETURN:g}]"),
    "gamma": (lambda v: 0 <= v <= 1, "in [0, 1]"),
    # the targets move tau of the way an update: below 1e-4 (a half-life of 7,000 updates) they keep
    # their first weights through a run (at 1e-8 float32 does not move them at all)
    "tau": (lambda v: 1e-4 <= v <= 1, "in [0.0001, 1]"),
    # alpha scales the entropy bonus against rewards of order 1: past 100 it is all the loss; below 1e-6
    # there is none (1e-300 is 0 in float32) until log alpha climbs back at about lr an update
    "alpha_init": (lambda v: 1e-6 <= v <= 100, "in [1e-06, 100]"),
    "target_entropy": (lambda v: -1000 <= v <= MAX_TARGET_ENTROPY,
                       f"in [-1000, {MAX_TARGET_ENTROPY:.1f}] (a tanh-squashed policy's entropy is at most "
                       f"{ACTION_DIM} ln 2)"),
    # AdamW moves each weight by about lr a step: 1 is already the size of the weights themselves;
    # below 1e-6 a step is near float32's resolution of a weight of order 1 (1.2e-7): nothing learns
    "lr": (lambda v: 1e-6 <= v <= 1, "in [1e-06, 1]"),
    "betas": (lambda v: all(0 <= b < 1 for b in v), "two numbers in [0, 1)"),
    "weight_decay": (lambda v: 0 <= v <= 100, "in [0, 100]"),
    "alpha_weight_decay": (lambda v: 0 <= v <= 100, "in [0, 100]"),
    "critic_updates": (lambda v: 1 <= v <= MAX_CRITIC_UPDATES, f"in [1, {MAX_CRITIC_UPDATES}]"),
    "actor_update_at": (lambda v: all(0 <= k < MAX_CRITIC_UPDATES for k in v),
                        f"critic update indices in [0, {MAX_CRITIC_UPDATES - 1}]"),
    "batch_size": (lambda v: 1 <= v <= MAX_ROWS, f"in [1, {MAX_ROWS}]"),
    # added to each input's std: past 100 it flattens every observation of the task to about 0; below 1e-8
    # an input that never varies has its rounding noise scaled by 1e8 or more (1e-300 is 0 in float32: NaN)
    "obs_norm_eps": (lambda v: 1e-8 <= v <= 100, "in [1e-08, 100]"),
    "replay_per_env": (lambda v: 1 <= v <= MAX_ROWS, f"in [1, {MAX_ROWS}]"),
    # bounded above by the replay it must fit (check_sizes; learner-bench's own check)
    "learning_starts": (lambda v: v is None or v >= 1, ">= 1 (or null)"),
    "amp_dtype": (lambda v: v in ("auto", "float32", "bfloat16", "float16"),
                  "'auto', 'float32', 'bfloat16' or 'float16'"),
    "graph_warmup_iters": (lambda v: 1 <= v <= 1000, "in [1, 1000]"),
    # torch's names (torch.compile's modes without Inductor's own CUDA graphs, which the
    # learner's capture refuses; torch.cuda.graph's modes): another failed only on a GPU
    "compile_mode": (lambda v: v in ("default", "max-autotune-no-cudagraphs"),
                     "'default' or 'max-autotune-no-cudagraphs' (torch's other modes turn on Inductor's own CUDA "
                     "graphs, which conflict with the learner's whole-iteration capture)"),
    "capture_error_mode": (lambda v: v in ("global", "thread_local", "relaxed"),
                           "'global', 'thread_local' or 'relaxed'"),
}

# fields that TrainConfig sets, with the flag that sets them
_FROM_FLAGS = {"batch_size": "--batch-size", "critic_updates": "--num-critic-updates",
               "actor_update_at": "--num-actor-updates", "replay_per_env": "--replay-per-env"}


def learner_value_problem(name: str, value) -> str | None:
    """What SACConfig's `name` must be where `value` is not one the trainer takes (type, range), or None."""
    from sacscale.learn.config import SACConfig  # imports torch: the pipeline's value checks need none

    field = {f.name: f for f in fields(SACConfig)}[name]
    annotation = field.type if isinstance(field.type, str) else getattr(field.type, "__name__", str(field.type))
    if annotation not in _TYPES:  # a new field: add its type above
        raise InputError(f"{name}: no type check for SACConfig annotation {annotation!r}")
    ok, what = _TYPES[annotation]
    if not ok(value):
        return what
    ok, what = _RANGES.get(name, (None, None))
    return what if ok and value is not None and not ok(value) else None


def check_learner_values(values: dict, from_extra: set[str], flags: dict[str, str] = _FROM_FLAGS) -> None:
    """Type and range of every SACConfig value in `values`, and the learner's size as a whole;
    `from_extra` are the keys given by --extra, `flags` the command's options for the others."""
    from sacscale.learn.config import SACConfig

    named = lambda name: f"--extra {name}" if name in from_extra else flags.get(name, name)  # noqa: E731
    for f in fields(SACConfig):
        if f.name in values and (what := learner_value_problem(f.name, values[f.name])):
            raise InputError(f"{named(f.name)} must be {what}, got {values[f.name]!r}")
    given = {f.name: values.get(f.name, f.default) for f in fields(SACConfig)}
    if problem := learner_size_problem(given, named):
        raise InputError(problem)


def check_sizes(cfg, sac) -> None:
    """Sizes against each other: what the replay holds, what one batch and the learning
    start need."""
    capacity = sac.replay_capacity(cfg.num_envs)
    held = f"the replay holds {capacity} rows (--replay-per-env {sac.replay_per_env} x --num-envs {cfg.num_envs})"
    if sac.batch_size > capacity:
        raise InputError(f"--batch-size {sac.batch_size} is larger than the replay: {held}")
    starts = sac.learning_starts_rows(cfg.num_envs)
    if starts > capacity:
        why = ("--extra learning_starts" if sac.learning_starts is not None
               else "max(--batch-size, 10 x --num-envs)")
        raise InputError(f"learning starts at {starts} rows ({why}) but {held}")


def check_seed(seed) -> None:
    if not (_is_int(seed) and 0 <= seed <= MAX_SEED):
        raise InputError(f"--seed must be an integer in [0, {MAX_SEED}], got {seed!r}")


# --------------------------------------------------------------------------------------
# Model, shared memory, log directory


def _check_assets() -> None:
    from sacscale.task.g1_model import check_asset_files

    try:
        check_asset_files()
    except (ImportError, OSError) as exc:
        raise InputError(f"no --model given, and the task's model cannot be built here: {_one_line(exc, 1000)}; "
                         f"or pass --model with a compiled model (.mjb, as `sacscale prepare-model` writes)") from exc


def check_model(path: str | None, data: bytes | None = None) -> None:
    """The model file (from `data`, its bytes, when read already) loads and is the task's (a
    2-env task is built and reset from it: about 15 ms), so a bad file is named here, not by a
    collector's traceback. Without a file the model is built from the G1's asset files."""
    if path is None:
        _check_assets()
        return
    p = Path(path)
    if not p.is_file():
        raise InputError(f"--model {path}: {not_a_model_file(p)}")
    problem = unheld_path_problem("--model", path)  # MuJoCo's bindings take only text names
    if problem or p.stat().st_size == 0:
        raise InputError(problem or f"--model {path}: empty file")
    from sacscale.mujoco_lib import mujoco  # here only: the pipeline's value checks need neither MuJoCo nor the task
    from sacscale.task.g1_model import load_model
    from sacscale.task.g1_walk_flat import G1WalkFlat

    try:
        model = load_model(path, data)
    except (ValueError, OSError, mujoco.FatalError) as exc:
        kind = "compiled MuJoCo model (.mjb)" if str(path).endswith(".mjb") else "MuJoCo model (MJCF)"
        raise InputError(f"--model {path}: not a loadable {kind} "
                         f"(truncated or another format?): {_one_line(exc)}") from exc
    try:
        env = G1WalkFlat(model, 2, 1, 0)
        try:
            env.reset()
        finally:
            env.close()
    except Exception as exc:  # noqa: BLE001 - any failure means the file is not the task's model
        raise InputError(f"--model {path}: loads, but is not the G1 walking task's model: "
                         f"{type(exc).__name__}: {_one_line(exc)}") from exc


def not_a_model_file(path: str | Path) -> str:
    """What stands at `path` instead of a model file: a folder or a device was called missing."""
    kind = file_kind(path)
    return "no such file" if kind is None else f"not a plain file ({kind}), not a model file"


def _one_line(exc: BaseException, limit: int = 300) -> str:
    return " ".join(str(exc).split())[:limit]


# a replay row: its seven fields' float32 columns and its one-byte valid flag (learn.replay)
REPLAY_ROW_BYTES = 4 * (2 * ACTOR_OBS_DIM + 2 * CRITIC_OBS_DIM + ACTION_DIM + 2) + 1


def machine_memory_bytes() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def replay_memory_problem(rows: int, cpu_ranks: int) -> str | None:
    """The replays of the ranks that train on the CPU against this machine's whole memory:
    one that cannot fit failed in torch's allocator after the job had started, naming no
    option. None where they fit (or no rank trains on the CPU)."""
    need, have = cpu_ranks * rows * REPLAY_ROW_BYTES, machine_memory_bytes()
    if need <= have:
        return None
    return (f"the replay of {cpu_ranks} rank(s) on the CPU needs {need / 2**30:,.1f} GiB ({rows:,} rows of "
            f"{REPLAY_ROW_BYTES} bytes a rank), more than this machine's {have / 2**30:,.1f} GiB of memory")


def shm_bytes_per_rank(num_envs: int, actor_numel: int) -> int:
    spec = shm.SlotSpec(num_envs, ACTOR_OBS_DIM, CRITIC_OBS_DIM, ACTION_DIM)
    return shm.TransitionSlots.NUM_SLOTS * spec.bytes_per_slot + 8 + 4 * actor_numel


def check_shared_memory(num_envs: int, local_ranks: int, sac) -> None:
    """The blocks of every rank on this host must fit in /dev/shm's free space."""
    from sacscale.learn.networks import Actor  # imports torch: the pipeline's value checks need none

    actor = Actor(obs_dim=sac.actor_obs_dim, action_dim=sac.action_dim, hidden=sac.actor_hidden,
                  log_std_min=sac.log_std_min, log_std_max=sac.log_std_max, mean_clip=sac.mean_clip)
    numel = sum(p.numel() for p in actor.parameters())
    need = local_ranks * shm_bytes_per_rank(num_envs, numel)
    free = shm.shm_free_bytes()
    if need > free:
        raise InputError(f"--num-envs {num_envs}: the shared-memory blocks of {local_ranks} rank(s) need "
                         f"{need / 2**20:.1f} MB, {shm.SHM_DIR} has {free / 2**20:.1f} MB free")


# What a caller may put in a fresh log directory before the trainer starts: the pipeline's
# run wrapper tees the trainer's output into LOG_DIR/train.log.
_CALLER_FILES = re.compile(r"^[^/]+\.log$")


def _check_log_dir(path: str | Path, resume: bool = False) -> None:
    """The log directory must be new or empty (a reused one would merge two runs' event
    files). `resume=True` (for `--resume RUN_DIR`) instead requires a run directory
    that train_meta.json marks as one."""
    p = Path(path)
    try:  # the run's files go inside it: its own name must not be another user's link either
        refuse_foreign_links(p / "train_meta.json")
    except OSError as exc:
        raise InputError(f"--log-dir {path}: {exc.filename}: {exc.strerror}") from None
    if p.exists() and not p.is_dir():
        raise InputError(f"--log-dir {path}: exists and is not a directory")
    if resume:
        if not (p / "train_meta.json").is_file():
            lone_state = (p / "checkpoints" / "final.pt").is_file()
            raise InputError(f"--resume {path}: not a run directory (no train_meta.json)" + (
                ": a learning state alone (a pipeline run's, logs/<run set>/learning_state/<run>/?); copy the run's "
                "folder (results/<run set>/runs/<run>/) to a folder of your own, copy these checkpoints/* into "
                "the copy's checkpoints/ and resume the copy" if lone_state else ""))
        return
    refuse_inside_a_held_folder(path)
    if not p.exists():
        return
    used = sorted(e.name for e in p.iterdir() if not (e.is_file() and _CALLER_FILES.match(e.name)))
    holder = _holder_of(Path(os.path.realpath(p)), path) if used else None
    if holder:
        raise InputError(f"--log-dir {path}: another sacscale train is training in it ({holder} holds "
                         f"{lock_file_beside(Path(os.path.realpath(p)), TRAINER_LOCK)}); choose a new directory")
    if used:
        shown = ", ".join(used[:5]) + (", ..." if len(used) > 5 else "")
        raise InputError(f"--log-dir {path} is not empty (it holds {shown}): a second run there would mix its "
                         "event files with the first's; choose a new directory")


check_log_dir = _check_log_dir


def _holder_of(folder: Path, path: str | Path) -> str | None:
    """Who holds `folder`'s trainer lock (holder_beside); a held lock file another user owns or
    may write is refused as what it is, its text unshown: no holder's word."""
    try:
        return holder_beside(folder, TRAINER_LOCK, others_only=True)
    except UntrustedLock as exc:
        raise InputError(f"--log-dir {path}: {exc}") from None


def refuse_inside_a_held_folder(path: str | Path) -> None:
    """A new log directory inside a folder a trainer holds (its trainer lock beside it: a run
    folder being trained in) is refused: a run written into it would mix with that run's files."""
    real = Path(os.path.realpath(path))
    for folder in real.parents:
        holder = _holder_of(folder, path) if folder.parent != folder else None
        if holder:
            raise InputError(f"--log-dir {path}: inside {folder}, where another sacscale train is training ("
                             f"{holder} holds {lock_file_beside(folder, TRAINER_LOCK)}); choose a directory outside it")


# The parts of a run folder a resumed run reads and writes: its record, its checkpoints
# (the learning state it loads, then writes again) and its event files.
_RUN_PARTS = ("train_meta.json", "checkpoints", "tb")


def check_resumed_parts(run_dir: str | Path) -> None:
    """Each part of a resumed run folder (_RUN_PARTS, all that lies under them) is this
    user's or root's, reached through no other user's link, and no folder of them lets
    another user rename its entries (sacscale.atomic.others_can_swap) nor write its files
    (others_can_write_file: a group holding another user too): the folder and those
    above it are judged as an output's, but a checkpoints/ of another user's (as a shared
    copy unpacked or chowned leaves it) had the resume load her learning state and write
    the new checkpoints where she could swap them."""
    for part in _RUN_PARTS:
        seen: set[tuple[int, int]] = set()
        for path in _tree(Path(run_dir) / part, seen):
            problem = _part_problem(path)
            if problem:
                raise InputError(f"--resume {run_dir}: {path} {problem}; resume a copy of the run in a folder "
                                 "of your own")


def _tree(top: Path, seen: set[tuple[int, int]], part: bool = True):
    """`top` and everything under it. A part that is a link of ours or root's (checkpoints/
    kept elsewhere) is walked where it leads: the resume reads its files. A link further
    down is judged itself (the folder or file it leads to) but not walked into: the resume
    reads nothing below one, and a link to / or /usr had the check walk the whole system
    and refuse the resume over a system file unrelated to the run."""
    if not os.path.lexists(top):
        return
    yield top
    try:
        st = top.stat()
    except OSError:
        return
    if not top.is_dir() or (top.is_symlink() and not part) or (st.st_dev, st.st_ino) in seen:
        return
    seen.add((st.st_dev, st.st_ino))
    for entry in sorted(top.iterdir()):
        yield from _tree(entry, seen, part=False)


def _part_problem(path: Path) -> str | None:
    """Why another user could change what `path` holds (or where it leads), or None."""
    try:
        refuse_foreign_links(path, reading=True)
    except OSError as exc:
        where = "" if exc.filename == str(path) else f" reached through {exc.filename},"
        return f"is{where} {exc.strerror}"
    try:
        st = path.stat()
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    if path.is_dir():
        return others_can_swap(path)
    # a file by the rule a folder gets: a group holding another user may write it too
    return others_can_write_file(st, str(path))


def check_writable(log_dir: str | Path) -> None:
    """The nearest existing ancestor of the log directory accepts new entries: a folder is
    made there and removed (permission bits alone let root "write" under /proc, where the
    log directory then could not be made and the error named a full disk)."""
    probe = Path(log_dir)
    while not probe.exists():
        probe = probe.parent
    if not os.access(probe, os.W_OK | os.X_OK):
        raise InputError(f"--log-dir {log_dir}: {probe} is not writable")
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".sacscale-probe-", dir=probe))
    except OSError as exc:
        raise InputError(f"--log-dir {log_dir}: nothing can be made in {probe} ({exc.strerror})") from None


# A checkpoint's pickled part (data.pkl in torch's zip format) holds the dictionary and
# tensor references, not the tensors: a few kB for ours. A crafted file could inflate it
# to gigabytes that the unpickler would then build in memory.
MAX_CHECKPOINT_PICKLE_BYTES = 16 * 2**20


def checkpoint_problem(path: str | os.PathLike) -> str | None:
    """Why `path` cannot be one of our checkpoints without unpickling it (not torch's zip
    format, or a pickled part larger than any of ours), or None."""
    try:
        with zipfile.ZipFile(path) as archive:
            pickles = [i for i in archive.infolist() if i.filename.endswith("data.pkl")]
    except (OSError, zipfile.BadZipFile) as exc:
        return f"not a readable torch checkpoint ({type(exc).__name__}: {exc})"
    if len(pickles) != 1:
        return f"not a readable torch checkpoint ({len(pickles)} pickled parts)"
    if pickles[0].file_size > MAX_CHECKPOINT_PICKLE_BYTES:
        return (f"its pickled part would inflate to {pickles[0].file_size:,} bytes "
                f"(ours are far below {MAX_CHECKPOINT_PICKLE_BYTES:,}): refused unread")
    return None
