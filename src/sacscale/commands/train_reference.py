"""`sacscale train-reference`: the reference trainer (unilab 1.5.2) on G1WalkFlat, in its
own environment, into a run directory that `analyze-run` reads like one of ours.

RUN/trainer.json     the exact command, its environment changes, the Hydra overrides, the
                     reference environment's package versions
RUN/run_config.json  the configuration its own Hydra resolves from those overrides
RUN/train_meta.json  status (running, completed, failed, interrupted), times
RUN/reference.log    its output (RUN/train.log is left to a caller's tee: the pipeline's run wrapper)
RUN/ref_logs/        its log root: G1WalkFlat/<timestamp>_mujoco/events.out.tfevents.*.gz (gzip-compressed
                     once the run completed: it logs every tag every iteration)
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from sacscale.analysis.events import EventFileError
from sacscale.atomic import write_json
from sacscale.checks import InputError, check_log_dir, wait_problem
from sacscale.commands._inputs import repository_hint
from sacscale.locks import UntrustedLock, holder_beside, lock_file_beside
from sacscale.parallel.pools import resolve_pools
from sacscale.pipeline.interpreter_check import interpreter_problem
from sacscale.pipeline.overrides import REFERENCE_OWNED, check_reference_override
from sacscale.pipeline.plan_values import MAX_NUM_ENVS, positive_int
from sacscale.processes import start_group
from sacscale.scratch import make_scratch_folder
from sacscale.train.config import MAX_ITERATIONS
from sacscale.train.open_run_folder import refuse_open_run_folder
from sacscale.trainers import unilab
from sacscale.trainers.reference_options import DEFAULT_PYTHON, add_arguments  # noqa: F401 (the CLI's entry points)
from sacscale.usage import say

REFERENCE_LOG = "reference.log"


def _asset_package_meshes() -> Path:
    """The asset package's G1 mesh folder; a named error where the package is missing."""
    from sacscale.task import g1_model  # imports MuJoCo: only where --meshes is not given

    try:
        return g1_model.asset_dir() / "assets"
    except ImportError as exc:
        raise ValueError(f"the G1's visual meshes: the asset package {g1_model.ASSET_PACKAGE} is not installed "
                         "here; give a folder of its STL files with --meshes (or $SACSCALE_REFERENCE_MESHES)") from exc


def _check_overrides(items: list[str]) -> None:
    """Each --override a KEY=VALUE of the reference's Hydra keys, the ones this command sets
    refused (the pipeline's rule for a unilab run's overrides)."""
    seen = set()
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"--override {item!r}: not KEY=VALUE (a Hydra override, e.g. algo.gamma=0.97)")
        if key.lstrip("+~") in seen:  # Hydra took the later one without a word
            raise ValueError(f"--override {item!r}: {key.lstrip('+~')} is given twice")
        seen.add(key.lstrip("+~"))
        if key.lstrip("+~") in REFERENCE_OWNED:
            raise ValueError(f"--override {item!r}: {key.lstrip('+~')} is set by this command from its own options "
                             "(--num-envs, --iterations, --seed, --devices, ...): give the option instead")
        check_reference_override(key, value, f"--override {item!r}")


def _check_meshes(folder: str) -> None:
    """The --meshes folder holds the STL files the reference's G1 scene is made of."""
    if problem := unilab.meshes_problem(folder):
        raise ValueError(f"--meshes {folder}: {problem}")


def _pools(text: str, ranks: int):
    """One validated CPU list per rank (sacscale.parallel.pools rules), or None."""
    return resolve_pools(text, ranks).pools if text.strip() else None


def _check_sizes(args: argparse.Namespace, devices: list[int]) -> None:
    """The bounds planning holds a unilab run to: one rank a GPU (ranks sharing one are our
    trainer's only), num_envs and iterations within the pipeline's limits."""
    if len(set(devices)) != len(devices):
        raise ValueError(f"--devices {args.devices}: repeats a GPU, which only our trainer (sacscale train) "
                         "supports; name each GPU once")
    positive_int(args.num_envs, "--num-envs", maximum=MAX_NUM_ENVS)
    positive_int(args.iterations, "--iterations", maximum=MAX_ITERATIONS)


def environment_folder(python: Path) -> Path:
    """The environment folder DIR of the interpreter DIR/bin/python as the kernel reaches it
    (links and `..` taken in order: `rv/bin/../bin/python` is rv's), so that every spelling
    of one environment names one creation lock."""
    return Path(os.path.realpath(python.parent.parent))


def environment_being_made(python: Path) -> str | None:
    """Why the interpreter DIR/bin/python must not be started or read yet: `reference-env
    --create` holds DIR's lock (`.<DIR>.lock` beside it) while it makes the environment, so
    the interpreter may be there without its packages; None when no one holds it.
    UntrustedLock where the held lock file is another user's (or one they may write)."""
    venv = environment_folder(python)  # as reference-env's lock names it
    holder = holder_beside(venv)
    if holder is None:
        return None
    return f"another sacscale command is creating this environment ({holder} holds {lock_file_beside(venv)})"


def run(args: argparse.Namespace) -> int:
    out = Path(args.log_dir)
    # absolute: the trainer runs in the run directory; not resolved: a venv is known by its own path
    python = str(Path(args.reference_python).absolute())
    # the options' own values: a bad one is a usage error (exit 2)
    try:
        try:
            being_made = environment_being_made(Path(python))
        except UntrustedLock as exc:
            raise ValueError(f"--reference-python {python}: {exc}; nothing was started") from None
        if being_made:  # half made: any other check names a wrong cause
            raise ValueError(f"--reference-python {python}: {being_made}; nothing was started: run this one once it "
                             "has finished")
        check_log_dir(out)  # new or empty, as for ours (a caller's *.log may be there)
        refuse_open_run_folder(out, "--log-dir")
        items = [d.strip() for d in args.devices.split(",")]
        if not all(d.isascii() and d.isdigit() for d in items):  # `0,,1` too: an empty item is no device
            raise ValueError(f"--devices {args.devices}: CUDA device indices, comma list (e.g. 0 or 0,1)")
        devices = [int(d) for d in items]
        if not devices:
            raise ValueError("--devices: no CUDA device index given")
        _check_sizes(args, devices)
        if problem := interpreter_problem(args.reference_python):  # before anything starts it
            raise ValueError(f"--reference-python {problem}")
        if problem := wait_problem(args.timeout_s, "--timeout-s"):
            raise ValueError(problem)
        if not Path(python).exists():
            raise ValueError(f"--reference-python {python}: no such interpreter; create the environment with "
                             "python3 -m venv .venv-ref && .venv-ref/bin/pip install torch "
                             "-r envs/reference-requirements.txt"
                             + (repository_hint(DEFAULT_PYTHON) if args.reference_python == DEFAULT_PYTHON else ""))
        # the options' values before the reference is asked anything (it names only itself)
        pools = _pools(args.collector_cpu_ids, len(devices))
        _check_overrides(args.override)
        if args.meshes:
            _check_meshes(args.meshes)
    except (ValueError, InputError) as exc:
        say(f"sacscale train-reference: error: {exc}", file=sys.stderr)
        return 2
    try:
        package = unilab.package_info(python)  # versions and where its scene XMLs are
        info = unilab.versions_record(package, python)
        meshes = Path(args.meshes) if args.meshes else _asset_package_meshes()
        scratch = make_scratch_folder("sacscale_ref_scene_")
        scene = unilab.make_scene(package["assets_root"], meshes, scratch)
        spec = unilab.UnilabRun(devices=devices, num_envs=args.num_envs, iterations=args.iterations, seed=args.seed,
                                log_root=str((out / unilab.LOG_ROOT_NAME).resolve()),
                                cpu_pools=pools, scene_file=str(scene),
                                extra=list(args.override))
        overrides = unilab.hydra_overrides(spec)
        resolved = unilab.compose_config(python, overrides)  # unknown keys fail here, before anything runs
    except (ValueError, InputError, unilab.UnilabError) as exc:  # PoolError is a ValueError
        say(f"sacscale train-reference: error: {exc}", file=sys.stderr)
        return 1
    argv, env_changes = unilab.command(spec, python)
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / unilab.TRAINER_RECORD,
               {"trainer": "unilab", "argv": argv, "env": env_changes, "overrides": overrides, "versions": info,
                "scene": {"meshes_from": str(meshes), "sha256_by_file": unilab.scene_digests(scene.parent)}})
    write_json(out / "run_config.json", resolved)
    meta = {"trainer": "unilab", "status": "running", "start_time": time.time(), "world_size": len(devices),
            "devices": [f"cuda:{d}" for d in devices], "config": vars(args) | {"override": list(args.override)}}
    write_json(out / "train_meta.json", meta)
    code, status = _supervise(argv, unilab.isolated_environ(env_changes), out / REFERENCE_LOG, args.timeout_s)
    shutil.rmtree(scratch, ignore_errors=True)
    meta.update(status=status, end_time=time.time(), exit_code=code)
    if status == "completed":
        try:
            meta["events_compressed"] = [p.name for p in unilab.compress_events(out / unilab.LOG_ROOT_NAME)]
        except EventFileError as exc:  # no events: the run wrapper names that; keep what is there
            say(f"sacscale train-reference: the events were not compressed: {exc}", file=sys.stderr)
    write_json(out / "train_meta.json", meta)
    if status != "completed":
        say(f"sacscale train-reference: the reference trainer {status} (exit code {code}); see {out / REFERENCE_LOG}",
            file=sys.stderr)
        return 1 if code >= 0 else 128 - code
    return 0


def _supervise(argv, env, log_path: Path, timeout_s: float) -> tuple[int, str]:
    """Run it in its own process group; SIGINT/SIGTERM or the timeout stop the whole group
    (SIGINT, then SIGKILL after 30 s)."""
    stop: list[int] = []
    handlers = {s: signal.signal(s, lambda signum, frame: stop.append(signum)) for s in (signal.SIGINT, signal.SIGTERM)}
    with open(log_path, "wb") as log:
        # in the run directory: its Hydra writes its own job log (train_sac.log) into the working directory
        trainer = start_group(argv, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=log_path.parent)
        try:
            ending = trainer.wait(timeout_s, stop=lambda: bool(stop))
            if ending.code is None:
                ending = trainer.end(signal.SIGINT, grace_s=30.0)
                return ending.code, "interrupted" if stop else "failed (timeout)"
        finally:
            for s, h in handlers.items():
                signal.signal(s, h)
    return ending.code, "completed" if ending.code == 0 else "failed"
