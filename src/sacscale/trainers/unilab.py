"""The reference trainer, PyPI `unilab==1.5.2` (its SAC on G1WalkFlat), as a second backend.

It runs as a program in an environment of its own (it pins MuJoCo 3.11; `envs/
reference-requirements.txt`), never imported here. This module maps a run of ours onto
its command line and reads its events back in our tags:

- command: `python -m unilab.scripts.train_sac task=g1_walk_flat/mujoco algo.num_envs=N
  algo.max_iterations=I algo.seed=S training.log_root=DIR ...` (Hydra overrides). 1.5.2
  has no device key: the rank count is the number of entries of CUDA_VISIBLE_DEVICES.
  CPU pools: `training.dp_collector_cpu_ids` with several ranks (the only case 1.5.2
  reads it); with one rank `+env.cpu_ids=[...]` is passed, and the wrapper also pins the
  whole process with taskset, since whether 1.5.2 honours that key is not established.
- scene: the reference's scene XMLs with the visual meshes it would download at run time
  taken from the asset package instead (`make_scene`), passed as `env.scene.model_file`.
- events: `LOG_ROOT/G1WalkFlat/<timestamp>_mujoco/events.out.tfevents.*` (stored `.gz` once
  `sacscale train-reference` has seen the run complete: `compress_events`); their step is
  the cumulative env-step count (summed over ranks). `read_events` gives them our tags:
  `Perf/total_env_steps` (value: that step; one point per logged `Perf/total_fps`
  event, at its wall time), `Perf/total_fps`, `Episode/length` (its
  `Train/mean_episode_length`), `Episode/return` (`Train/mean_reward`), `Reward/<term>`
  (its `reward/<term>` x ctrl_dt, below), and every tag, these included, also under
  `Ref/<tag>` as logged, so the same steady-rate definition applies to both trainers.

What 1.5.2's tags measure (its source, unilab/...):

- `reward/<term>`: per control step, the mean over envs of raw term x weight, *before*
  the x dt that the reward it trains on carries (managers/reward_manager.py:142-175,
  `step_reward_extras` 248-263; `compute(dt=self.step_dt)`, step_dt = `env.ctrl_dt`,
  envs/manager_based_rl_env.py:1013, 1401; scale_rewards_by_dt defaults to True, :119,
  and the SAC G1 task keeps it). The collector averages it over the steps since its last
  report, the logger over the reports since the last learner iteration
  (rl/runtime/offpolicy/worker.py:874-878, 507-513; rl/logging/metric_schema.py:533-545,
  unit "weighted reward units/s"). Ours, `Reward/<term>`, is the same mean of raw x
  weight x 0.02 (task/g1_walk_flat.py; reward_dt_scale = the reference's ctrl_dt), so
  `Reward/<term>` = `reward/<term>` x ctrl_dt puts theirs on our per-step weighted scale
  (ctrl_dt from the run folder's run_config.json `config.env.ctrl_dt`, REWARD_DT when it
  is absent). Both trainers' tracking weights are 2.0 (lin) and 1.5 (yaw); their
  `reward/alive` logs 10.0 = weight x 1, i.e. no dt in it.
- `Perf/collector_env_step_backend_ms`: wall ms of the backend (MuJoCo) part of one
  vectorised step of the rank's envs (`step_core_ms`, base/torch_env.py:350, mapped in
  rl/runtime/collector_timing.py:13), mean over the env steps since the collector's last
  report (worker.py:115-117, 922-923, 517-520; schema: "latest collector-report mean").
  `Perf/collector_env_step_ms` is the whole `env.step` (worker.py:781-794), of which
  `..._apply_action_ms`, `..._backend_ms`, `..._update_state_ms`, `..._reset_done_ms`
  are parts; `Perf/collector_learner_action_wait_ms` the collector's wait for the
  learner's actions, `Perf/collector_inference_request_ms` its request for them,
  `Perf/collector_replay_write_ms` its replay write (all ms per collector step).
- `Perf/iteration_time` (s): the learner loop's iteration, from its start to after the
  update (rl/runtime/offpolicy/double_buffer_runner.py:1793-2196; metric_schema.py:346-351: "measured
  complete iteration wall time"); `Perf/learning_time` (s) the update within it;
  `Perf/learner_collector_wait_ms` and `Perf/learner_inference_ms` its wait for the
  collector's next result and its policy inference for the collector (sums in the
  iteration, metric_schema.py:381-390). Collector and learner overlap, so these do not
  add up to the collector's step.

The physics share of both trainers (the backend step against ours' `Time/*` phases) is
computed in sacscale.analysis.metrics (PHYSICS_MS_TAGS), from `Ref/<tag>`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from sacscale.analysis.events import EventFileError, Scalar, compress_event_files, read_event_dir

TASK = "g1_walk_flat/mujoco"
ENTRY_MODULE = "unilab.scripts.train_sac"
EVENT_SUBDIR = "G1WalkFlat"
# Their tag -> ours; the step of each of their events is the cumulative env-step count.
TAG_MAP = {"Perf/total_fps": "Perf/total_fps", "Train/mean_episode_length": "Episode/length",
           "Train/mean_reward": "Episode/return"}
STEP_CLOCK_TAG = "Perf/total_fps"  # logged once per logging interval: our env-step points
# Their per-term reward rate x ctrl_dt = our per-step weighted term (module docstring)
REWARD_PREFIX, OUR_REWARD_PREFIX = "reward/", "Reward/"
REWARD_DT = 0.02  # G1WalkFlat's ctrl_dt in 1.5.2 (conf/sac/task/g1_walk_flat/base.yaml)


class UnilabError(RuntimeError):
    """The reference trainer cannot be configured, started or read (the message says why)."""


@dataclass
class UnilabRun:
    devices: list[int]                    # CUDA device indices; one rank per entry
    num_envs: int                         # per rank
    iterations: int
    seed: int
    log_root: str
    cpu_pools: list[list[int]] | None = None  # one simulation pool per rank
    scene_file: str | None = None         # a scene with its meshes (make_scene); None: the package's own
    extra: list[str] = field(default_factory=list)  # further Hydra overrides, passed as given

    def __post_init__(self) -> None:
        if not self.devices:
            raise UnilabError("the reference trainer needs at least one CUDA device (it refuses to train on CPU)")
        if self.cpu_pools is not None and len(self.cpu_pools) != len(self.devices):
            raise UnilabError(f"{len(self.cpu_pools)} CPU pools for {len(self.devices)} ranks")
        for name in ("num_envs", "iterations"):
            if getattr(self, name) <= 0:
                raise UnilabError(f"{name} must be positive, got {getattr(self, name)}")


def _int_list(cpus) -> str:
    return "[" + ",".join(str(int(c)) for c in cpus) + "]"


def hydra_overrides(run: UnilabRun) -> list[str]:
    """The Hydra overrides that make the reference trainer run `run`."""
    out = [
        f"task={TASK}",
        f"algo.num_envs={run.num_envs}",
        f"algo.max_iterations={run.iterations}",
        f"algo.seed={run.seed}",
        f"training.log_root={run.log_root}",
        "training.logger=tensorboard",   # wandb is a dependency but only loaded when chosen
        "training.no_play=true",          # no playback rollout after training
        "training.export_onnx=false",
        "training.trace_enabled=false",
    ]
    if run.scene_file:
        out.append(f"env.scene.model_file={run.scene_file}")
    if run.cpu_pools is not None:
        if len(run.devices) > 1:
            out.append("training.dp_collector_cpu_ids=[" + ",".join(_int_list(p) for p in run.cpu_pools) + "]")
        else:
            out.append(f"+env.cpu_ids={_int_list(run.cpu_pools[0])}")
    return out + list(run.extra)


def command(run: UnilabRun, python: str) -> tuple[list[str], dict[str, str]]:
    """(argv, environment changes) of the run. With one rank and a pool, argv starts with
    taskset so that the whole process stays on the pool."""
    argv = [python, "-m", ENTRY_MODULE, *hydra_overrides(run)]
    if run.cpu_pools is not None and len(run.devices) == 1:
        argv = ["taskset", "-c", ",".join(str(c) for c in run.cpu_pools[0]), *argv]
    env = {"CUDA_VISIBLE_DEVICES": ",".join(str(d) for d in run.devices), "PYTHONUNBUFFERED": "1",
           "WANDB_MODE": "disabled"}
    return argv, env


# Variables that would put another environment's packages in front of the reference's own
# (a PYTHONPATH naming ours would load MuJoCo 4 into a trainer pinned to 3.11).
FOREIGN_PYTHON_VARS = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE")


def isolated_environ(changes: dict[str, str] | None = None) -> dict[str, str]:
    """The process environment for the reference interpreter: ours without the variables
    that would mix our packages into it, plus `changes`."""
    env = {k: v for k, v in os.environ.items() if k not in FOREIGN_PYTHON_VARS}
    env["PYTHONNOUSERSITE"] = "1"  # nor the user's own site-packages
    return env | (changes or {})


COMPOSE_SCRIPT = """
import json, pathlib, sys
import unilab
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf
conf = pathlib.Path(unilab.__file__).parent / "conf" / "sac"  # what train_sac.py's @hydra.main reads
with initialize_config_dir(config_dir=str(conf), version_base="1.3"):
    cfg = compose(config_name="config", overrides=json.loads(sys.argv[1]))
print(json.dumps(OmegaConf.to_container(cfg, resolve=False)))
"""


def compose_config(python: str, overrides: list[str], timeout_s: float = 300.0) -> dict:
    """The reference's resolved configuration for `overrides`, composed by its own Hydra
    (in its interpreter). An unknown key, e.g. after an upstream rename, is an error that
    names it."""
    try:
        done = subprocess.run([python, "-c", COMPOSE_SCRIPT, json.dumps(overrides)], capture_output=True,
                              text=True, timeout=timeout_s, env=isolated_environ())
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UnilabError(f"{python}: cannot run the reference's Hydra ({exc})") from exc
    if done.returncode != 0:
        # Hydra's last lines: "...Exception: Could not override 'algo.x'." and its hint
        tail = [ln.strip() for ln in done.stderr.strip().splitlines() if ln.strip()][-2:]
        reason = " ".join(ln.split("Exception: ", 1)[-1] for ln in tail) or f"exit code {done.returncode}"
        raise UnilabError(f"the reference's configuration refuses the overrides: {reason}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def package_info(python: str) -> dict:
    """Versions of the reference environment's packages and where its assets are."""
    script = ("import json, importlib.metadata as m, unilab.assets as a; "
              "print(json.dumps({'packages': {d.metadata['Name']: d.version for d in m.distributions()}, "
              "'assets_root': str(a.ASSETS_ROOT_PATH)}))")
    done = subprocess.run([python, "-c", script], capture_output=True, text=True, timeout=300, env=isolated_environ())
    if done.returncode != 0:
        raise UnilabError(f"{python} cannot import the reference: {done.stderr.strip()[-300:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def make_scene(assets_root: str | Path, meshes: str | Path, out_dir: str | Path) -> Path:
    """A copy of the reference's G1 scene whose mesh files come from `meshes` (the asset
    package's G1 STL folder) instead of a run-time download. Returns the scene file."""
    src = Path(assets_root) / "robots" / "g1"
    meshes, out = Path(meshes), Path(out_dir)
    robot = src / "g1.xml"
    if not robot.is_file():
        raise UnilabError(f"{robot}: the reference's G1 model is not there")
    files = sorted({m.get("file") for m in ET.parse(robot).getroot().iter("mesh") if m.get("file")})
    missing = [f for f in files if not (meshes / f).is_file()]
    if missing:
        raise UnilabError(f"{meshes} lacks {len(missing)} mesh file(s) the reference's G1 needs: {missing[:5]}")
    # not under a 'robots/g1' path: the reference's asset hub would try to download there
    (out / "assets").mkdir(parents=True, exist_ok=True)
    for name in ("g1.xml", "scene_flat.xml"):
        shutil.copy2(src / name, out / name)
    for f in files:
        shutil.copy2(meshes / f, out / "assets" / f)
    return out / "scene_flat.xml"


def scene_digests(scene_dir: str | Path) -> dict[str, str]:
    """SHA-256 of every file of a scene folder (make_scene's), by relative path: what the
    reference's run loaded, meshes included."""
    from sacscale.evidence.manifest import sha256_file

    base = Path(scene_dir)
    return {p.relative_to(base).as_posix(): sha256_file(p) for p in sorted(base.rglob("*")) if p.is_file()}


def event_dir(log_root: str | Path) -> Path:
    """The one event directory a run with this log root wrote."""
    base = Path(log_root) / EVENT_SUBDIR
    found = sorted(p for p in base.glob("*_mujoco") if p.is_dir()) if base.is_dir() else []
    if not found:
        raise EventFileError(f"{base}: no <timestamp>_mujoco run directory of the reference trainer")
    if len(found) > 1:
        raise EventFileError(f"{base}: {len(found)} runs of the reference trainer ({', '.join(p.name for p in found)}); "
                             "one log root per run")
    return found[0]


def read_events(log_root: str | Path) -> dict[str, list[Scalar]]:
    """The reference run's scalars in our tags (module docstring). Steps become our
    logging points' indices, 1, 2, ..."""
    theirs = read_event_dir(event_dir(log_root))
    clock = theirs.get(STEP_CLOCK_TAG)
    if not clock:
        raise EventFileError(f"{log_root}: the reference's events hold no '{STEP_CLOCK_TAG}'")
    ours: dict[str, list[Scalar]] = {
        "Perf/total_env_steps": [Scalar(i + 1, s.wall_time, float(s.step)) for i, s in enumerate(clock)],
    }
    index = {s.step: i + 1 for i, s in enumerate(clock)}
    dt = ctrl_dt(event_dir(log_root))
    for tag, values in theirs.items():
        renamed = [Scalar(index.get(s.step, s.step), s.wall_time, s.value) for s in values]
        ours[f"Ref/{tag}"] = renamed
        if tag in TAG_MAP:
            ours[TAG_MAP[tag]] = renamed
        elif tag.startswith(REWARD_PREFIX) and tag != REWARD_PREFIX:
            ours[OUR_REWARD_PREFIX + tag[len(REWARD_PREFIX):]] = [Scalar(s.step, s.wall_time, s.value * dt)
                                                                 for s in renamed]
    return ours


def compress_events(log_root: str | Path) -> list[Path]:
    """Store a finished reference run's event files gzip-compressed (`*.gz`, read back by
    the same strict reader). It logs every tag at every iteration: about 2 MB per 1000
    iterations at 2048 envs, 10.6 MB for a 5000-iteration learning run, 1.2 MB compressed."""
    return compress_event_files(event_dir(log_root))


def ctrl_dt(run_folder: str | Path) -> float:
    """The control step of a reference run (its run_config.json `config.env.ctrl_dt`), the
    dt its logged reward rates leave out; REWARD_DT when the file does not say."""
    record = Path(run_folder) / "run_config.json"
    try:
        value = json.loads(record.read_text())["config"]["env"]["ctrl_dt"]
    except FileNotFoundError:
        return REWARD_DT
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise EventFileError(f"{record}: no readable config.env.ctrl_dt ({exc})") from exc
    if not isinstance(value, (int, float)) or not value > 0:
        raise EventFileError(f"{record}: config.env.ctrl_dt is {value!r}, not a positive number")
    return float(value)


# A run directory of `sacscale train-reference`: trainer.json names the trainer, the
# reference's own log root is a folder inside.
TRAINER_RECORD = "trainer.json"
LOG_ROOT_NAME = "ref_logs"


def is_reference_run(run_dir: str | Path) -> bool:
    record = Path(run_dir) / TRAINER_RECORD
    if not record.is_file():
        return False
    try:
        return json.loads(record.read_text()).get("trainer") == "unilab"
    except (OSError, json.JSONDecodeError) as exc:
        raise EventFileError(f"{record}: unreadable trainer record ({exc})") from exc


def reference_log_root(run_dir: str | Path) -> Path:
    return Path(run_dir) / LOG_ROOT_NAME


def rank0_event_files(run_dir: str | Path) -> list[Path]:
    """The event files that hold a run's main figure, for either trainer: ours in
    tb/rank0/, the reference's in its log root's one run folder (none: empty list)."""
    run_dir = Path(run_dir)
    if is_reference_run(run_dir):
        base = reference_log_root(run_dir) / EVENT_SUBDIR
        return sorted(base.glob("*_mujoco/events.out.tfevents.*"))
    return sorted((run_dir / "tb" / "rank0").glob("events.out.tfevents.*"))


def versions_record(info: dict, python: str) -> dict:
    """What the run record keeps of the reference environment (`info`: package_info)."""
    keep = ("unilab", "unisim-core", "mujoco", "mjbatch-uni", "torch", "hydra-core", "omegaconf", "numpy")
    return {"python": python, "packages": {k: v for k, v in info["packages"].items() if k.lower() in keep},
            "all_packages": info["packages"], "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}


__all__ = ["is_reference_run", "reference_log_root", "TRAINER_RECORD", "LOG_ROOT_NAME", "UnilabRun", "UnilabError", "hydra_overrides", "command", "isolated_environ", "compose_config", "make_scene", "scene_digests", "event_dir",
           "read_events", "compress_events", "package_info", "versions_record"]
