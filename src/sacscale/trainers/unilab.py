"""The reference trainer, PyPI `unilab==1.5.2` (its SAC on G1WalkFlat), as a second backend.

It runs as a program in an environment of its own (it pins MuJoCo 3.11; `envs/
reference-requirements.txt`), never imported here. This module maps a run of ours onto
its command line (Hydra overrides; the rank count is the number of CUDA_VISIBLE_DEVICES
entries), builds the scene it loads (`make_scene`) and records its environment. Reading
its events back in our tags is sacscale.analysis.reference's (the run directory's layout
is defined there, where the reader needs it). Its command line, CPU pools and what its
logged tags measure, with the places in its source: docs/reference-trainer.md.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from sacscale.analysis.events import compress_event_files
from sacscale.analysis.reference import (
    EVENT_SUBDIR,
    LOG_ROOT_NAME,
    TRAINER_RECORD,
    event_dir,
    is_reference_run,
    read_events,
    reference_log_root,
)
from sacscale.hashes import sha256_file

TASK = "g1_walk_flat/mujoco"
ENTRY_MODULE = "unilab.scripts.train_sac"


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


# The reference interpreter's `-c` probes read nothing from the environment: isolated mode
# keeps the working folder off their sys.path in any Python 3 (PYTHONSAFEPATH, which the CLI
# sets for every child, is read from 3.11 on; an existing environment may be older)
PROBE_FLAGS = ("-I",)


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
        done = subprocess.run([python, *PROBE_FLAGS, "-c", COMPOSE_SCRIPT, json.dumps(overrides)], capture_output=True,
                              text=True, timeout=timeout_s, env=isolated_environ())
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UnilabError(f"{python}: cannot run the reference's Hydra ({exc})") from exc
    if done.returncode != 0:
        # Hydra's last lines: "...Exception: Could not override 'algo.x'." and its hint
        tail = [ln.strip() for ln in done.stderr.strip().splitlines() if ln.strip()][-2:]
        reason = " ".join(ln.split("Exception: ", 1)[-1] for ln in tail) or f"exit code {done.returncode}"
        raise UnilabError(f"the reference's configuration refuses the overrides: {reason}")
    return _last_json_line(python, done.stdout, "its resolved configuration")


def package_info(python: str) -> dict:
    """Versions of the reference environment's packages and where its assets are."""
    script = ("import json, importlib.metadata as m, unilab.assets as a; "
              "print(json.dumps({'packages': {d.metadata['Name']: d.version for d in m.distributions()}, "
              "'assets_root': str(a.ASSETS_ROOT_PATH)}))")
    try:
        done = subprocess.run([python, *PROBE_FLAGS, "-c", script], capture_output=True, text=True, timeout=300,
                              env=isolated_environ())
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UnilabError(f"{python}: cannot run it ({exc})") from exc
    if done.returncode != 0:  # its traceback's last line names the exception, the lines above are Python's
        last = ([ln.strip() for ln in done.stderr.splitlines() if ln.strip()] or [f"exit code {done.returncode}"])[-1]
        raise UnilabError(f"{python} cannot import the reference: {last[:300]}")
    info = _last_json_line(python, done.stdout, "its packages' versions")
    if not isinstance(info.get("packages"), dict) or "assets_root" not in info:
        raise UnilabError(f"{python}: printed {str(info)[:80]!r}, not its packages and assets folder")
    return info


def _last_json_line(python: str, stdout: str, what: str) -> dict:
    """The JSON object a script run by `python` printed last; one line naming the interpreter
    where it printed none (not a Python, or one that prints other things)."""
    lines = stdout.strip().splitlines()
    try:
        value = json.loads(lines[-1])
    except (IndexError, ValueError):
        shown = repr(lines[-1][:80]) if lines else "nothing"
        raise UnilabError(f"{python}: printed {shown} where a Python prints {what} as JSON: is it the reference "
                          "environment's Python?") from None
    if not isinstance(value, dict):
        raise UnilabError(f"{python}: printed {str(value)[:80]!r} where a Python prints {what} as a JSON object")
    return value


# The mesh files the pinned reference's G1 (its robots/g1/g1.xml) names, as the scenes of its
# recorded runs hold them: a --meshes folder is judged against them before the reference is
# asked anything (make_scene checks the names its g1.xml gives again).
_SIDED = ("ankle_pitch_link", "ankle_roll_link", "elbow_link", "hip_pitch_link", "hip_roll_link", "hip_yaw_link",
          "knee_link", "rubber_hand", "shoulder_pitch_link", "shoulder_roll_link", "shoulder_yaw_link",
          "wrist_pitch_link", "wrist_roll_link", "wrist_yaw_link")
_MIDDLE = ("head_link", "logo_link", "pelvis", "pelvis_contour_link", "torso_link_rev_1_0", "waist_roll_link_rev_1_0",
           "waist_yaw_link_rev_1_0")
REFERENCE_G1_MESHES = tuple(sorted([f"{side}_{part}.STL" for side in ("left", "right") for part in _SIDED]
                                   + [f"{part}.STL" for part in _MIDDLE]))


def missing_meshes(meshes: str | Path) -> list[str]:
    """The files of REFERENCE_G1_MESHES that are not plain files in the folder `meshes`."""
    return [name for name in REFERENCE_G1_MESHES if not (Path(meshes) / name).is_file()]


def meshes_problem(meshes: str | Path) -> str | None:
    """Why the folder `meshes` cannot give the reference's G1 scene its STL files, as a
    phrase after the folder's name (train-reference's --meshes, planning's reference.meshes);
    None when it can."""
    if not Path(meshes).is_dir():
        return "not a folder (the asset package's G1 STL files)"
    missing = missing_meshes(meshes)
    if missing:
        return (f"lacks {len(missing)} of the {len(REFERENCE_G1_MESHES)} mesh files the reference's G1 needs: "
                + ", ".join(missing[:3]) + (", ..." if len(missing) > 3 else ""))
    return None


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
    base = Path(scene_dir)
    return {p.relative_to(base).as_posix(): sha256_file(p) for p in sorted(base.rglob("*")) if p.is_file()}


def compress_events(log_root: str | Path) -> list[Path]:
    """Store a finished reference run's event files gzip-compressed (`*.gz`, read back by
    the same strict reader). It logs every tag at every iteration: about 2 MB per 1000
    iterations at 2048 envs, 10.6 MB for a 5000-iteration learning run, 1.2 MB compressed."""
    return compress_event_files(event_dir(log_root))


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


# The run directory's layout and reader (analysis.reference) are part of this backend's interface.
__all__ = ["EVENT_SUBDIR", "LOG_ROOT_NAME", "TRAINER_RECORD", "UnilabError", "UnilabRun", "command", "compose_config",
           "compress_events", "event_dir", "hydra_overrides", "is_reference_run", "isolated_environ", "make_scene",
           "package_info", "rank0_event_files", "read_events", "reference_log_root", "scene_digests",
           "versions_record"]
