"""A stand-in `sacscale` for the workflow test: fake train/probe/prepare-model, the real
package for every other command. Installed as an executable named `sacscale` first on
PATH. FAKE_FAIL_RUN=<run name> makes that run's training fail (exit 3); FAKE_HANG_RUN
makes it hang (after writing a partial event file, and touching the file FAKE_HANG_MARKER
names, if set, once it is about to hang)."""

import hashlib
import importlib.util
import json
import os
import platform
import sys
import time
from pathlib import Path


# An iteration's seconds: the stand-in waits out its events' times (24 iterations a run), so
# this is most of a stand-in run's wall time, and the rates it logs follow from it.
ITERATION_S = 0.02
# A traced rank's phase times, per cent of an iteration (its logged rate): the learner's
# phases fill most of its iteration, the collector's thread and the pool's physics less of it,
# the physics wait a part of the env step (what verify holds them to; sacscale.evidence.phase_bounds)
TRACED_MS = {tag: share * 10.0 * ITERATION_S for tag, share in {
    "Time/learner_wait_ms": 20.0, "Time/learner_h2d_ms": 5.0, "Time/learner_update_ms": 70.0,
    "Time/collector_env_step_ms": 60.0, "Time/collector_action_select_ms": 10.0,
    "Time/collector_replay_write_ms": 5.0, "Time/collector_weight_sync_ms": 5.0,
    "Time/collector_physics_ms": 80.0, "Time/collector_physics_wait_ms": 40.0}.items()}


def opt(args, name, default=None):
    return args[args.index(name) + 1] if name in args else default


def measured(value, *where):
    """`value` off by less than 1e-3 of it, differently for every run, rank, step and tag: a
    measured figure (a rate, a time, a return) is never the same in two runs or ranks, and
    verify names events that share most values of a tag as copied (values within 1e-6 of
    each other match: a spread of 1e-4 would match a fifth of them by chance)."""
    noise = int.from_bytes(hashlib.sha256(repr(where).encode()).digest()[:4], "big") / 2**32
    return value * (1.0 + 1e-3 * noise)


class SummaryWriter:
    """The scalars of torch's SummaryWriter, written with tensorboard's own event writer:
    the same event files without importing torch (seconds per fake run on 2 cores)."""

    def __init__(self, log_dir):
        from tensorboard.summary.writer.event_file_writer import EventFileWriter

        self._writer = EventFileWriter(str(log_dir))

    def add_scalar(self, tag, value, step, walltime=None):
        from tensorboard.compat.proto.event_pb2 import Event
        from tensorboard.compat.proto.summary_pb2 import Summary

        summary = Summary(value=[Summary.Value(tag=tag, simple_value=float(value))])
        self._writer.add_event(Event(wall_time=time.time() if walltime is None else walltime, step=int(step),
                                     summary=summary))

    def flush(self):
        self._writer.flush()

    def close(self):
        self._writer.close()


def save_like_torch(obj: dict, path: Path) -> None:
    """torch.save's zip format for a dict of plain values (no tensors), written without
    importing torch (seconds per fake run on 2 cores): torch.load(weights_only=True) reads
    it back as the same dict (tests/workflow/test_fake_trainer_checkpoint.py)."""
    import pickle
    import random
    import zipfile

    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", pickle.dumps(obj, protocol=2))
        z.writestr("archive/.format_version", "1")
        z.writestr("archive/byteorder", "little")
        z.writestr("archive/version", "3\n")
        z.writestr("archive/.data/serialization_id", "".join(random.choices("0123456789", k=40)))


def torch_version() -> str | None:
    """torch.__version__, as the real trainer and probe record it, read from torch/version.py
    (importing torch would take seconds per stand-in run); None without torch, as
    verify-env then records."""
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        return None
    names: dict = {}
    exec((Path(spec.origin).parent / "version.py").read_text(), names)
    return names["__version__"]


# the learner's TARGET_FAULT_SOURCES (importing the learner would import torch)
TARGET_FAULT_SOURCES = ("reward", "termination", "next_logp", "next_value")


def real_trainer_fields(cfg, ranks: int, iterations: int) -> dict:
    """The rest of what the real trainer records in train_meta.json (sacscale.train.record),
    every field verify requires of a set made by this code: its pools resolved as the real
    one resolves them, no non-finite data, ranks that end alike."""
    from sacscale.parallel.pools import resolve_learner_cpus, resolve_pools
    from sacscale.train.config import compiles_losses

    pools = resolve_pools(cfg.collector_cpu_ids, ranks)
    digest = hashlib.sha256(f"fake learner state {iterations}".encode()).hexdigest()
    return {"losses_compiled": compiles_losses(cfg),
            "collector_pools": {**pools.as_dict(), "learner_affinity": resolve_learner_cpus(cfg.learner_cpu_ids,
                                                                                           pools.pools)},
            "env_steps_accounting": "Perf/total_env_steps is written by rank 0 from an all-reduced sum of every "
                                    "rank's cumulative env steps",
            "final_learner_state_sha256_by_rank": [digest] * ranks, "ranks_identical": True,
            "nonfinite_rows": 0, "nonfinite_targets": 0, "nonfinite_rows_by_rank": [0] * ranks,
            "nonfinite_target_sources": {name: 0 for name in TARGET_FAULT_SOURCES}}


def train(args):
    log_dir = Path(opt(args, "--log-dir"))
    if os.environ.get("FAKE_FAIL_RUN") and os.environ["FAKE_FAIL_RUN"] in log_dir.name:
        print("fake trainer: failing on purpose", file=sys.stderr)
        return 3
    if os.environ.get("FAKE_HANG_RUN") and os.environ["FAKE_HANG_RUN"] in log_dir.name:
        writer = SummaryWriter(str(log_dir / "tb" / "rank0"))
        writer.add_scalar("Perf/total_env_steps", 1.0, 1)
        writer.flush()
        print("fake trainer: hanging on purpose", flush=True)
        if os.environ.get("FAKE_HANG_MARKER"):  # a test waits for this before it signals
            Path(os.environ["FAKE_HANG_MARKER"]).write_text(str(os.getpid()))
        time.sleep(3600)
    ranks = len(opt(args, "--devices").split(","))
    iterations, every, envs = (int(opt(args, "--iterations")), int(opt(args, "--log-every")),
                               int(opt(args, "--num-envs")))
    start = time.time()  # the trainer's window (train_meta.json), inside the run wrapper's
    seed = (opt(args, "--seed", "0"), log_dir.name)  # each run's own, as its measured figures are
    writers = [SummaryWriter(str(log_dir / "tb" / f"rank{r}")) for r in range(ranks)]
    t0 = time.time()
    from tqdm import tqdm

    bar = tqdm(total=iterations, desc="train", unit="it", file=sys.stderr, mininterval=0)  # as the real one's
    from sacscale.train import FIRST_UPDATE_DONE

    for it in range(every, iterations + 1, every):
        if it - every < 10 <= it:  # the real trainer's line, at its first learner update (the run wrapper reads it)
            bar.write(f"sacscale train: rank 0: {FIRST_UPDATE_DONE} at iteration 10 (0.0 s: compile, warm-up, "
                      "graph capture)", file=sys.stderr)
        bar.set_postfix(fps=f"{envs * ranks / ITERATION_S:,.0f}", refresh=False)
        bar.update(every)
        wall = t0 + ITERATION_S * it
        for r, w in enumerate(writers):
            w.add_scalar("Perf/rank_env_steps", it * envs, it, walltime=wall)
            w.add_scalar("Perf/iteration", it, it, walltime=wall)
            # the rates the real trainer logs from its own clock: envs an iteration, ITERATION_S each
            w.add_scalar("Perf/rank_fps", measured(envs / ITERATION_S, seed, r, it, "fps"), it, walltime=wall)
            if r == 0:
                w.add_scalar("Perf/total_env_steps", it * envs * ranks, it, walltime=wall)
                total_fps = measured(envs * ranks / ITERATION_S, seed, it, "total")
                w.add_scalar("Perf/total_fps", total_fps, it, walltime=wall)
                w.add_scalar("Episode/return", measured(0.1 * it, seed, it, "return"), it, walltime=wall)
            # the task's per-step weighted terms: 0.6 and 0.4 of their maxima (weight x 0.02)
            w.add_scalar("Reward/tracking_lin_vel", 0.6 * 2.0 * 0.02, it, walltime=wall)
            w.add_scalar("Reward/tracking_ang_vel", 0.4 * 1.5 * 0.02, it, walltime=wall)
            if "--trace" in args:  # every phase time, as a traced real rank logs them
                for tag, ms in TRACED_MS.items():
                    w.add_scalar(tag, measured(ms, seed, r, it, tag), it, walltime=wall)
    bar.close()
    for w in writers:
        w.close()
    time.sleep(max(0.0, wall - time.time()))  # its events' times lie within its window, as a real run's do
    # what the real trainer records, from the real trainer's parser (verify cross-checks it)
    from sacscale.train.config import TrainConfig
    from sacscale.train.options import build_parser

    config = vars(build_parser().parse_args(args))
    cfg = TrainConfig(**config)
    # a policy of this run (its evaluation records the hash and the model; verify binds them)
    model = Path(config["model"]).read_bytes() if config.get("model") else b""
    (log_dir / "checkpoints").mkdir(parents=True, exist_ok=True)
    # the run wrapper keeps a policy-only copy of it (torch.load)
    save_like_torch({"format": "sacscale-checkpoint", "fake": True, "run": log_dir.name, "iteration": iterations,
                     "env_steps": iterations * envs, "model_sha256": hashlib.sha256(model).hexdigest(),
                     "optimizers": {}, "train_config": config}, log_dir / "checkpoints" / "final.pt")
    (log_dir / "train_meta.json").write_text(json.dumps({
        "fake": True, "config": config, "world_size": ranks, "status": "completed",
        "rank0_env_steps": iterations * envs,  # rank 0's steps, as its checkpoint records them
        "devices": cfg.device_list(), "start_time": start, "end_time": time.time(),
        "torch": torch_version(), "python": platform.python_version(),
        **real_trainer_fields(cfg, ranks, iterations),
    }))
    print(f"fake trainer: {iterations} iterations, {ranks} rank(s)")
    return 0


def train_reference(args):
    """`sacscale train-reference` (the reference trainer, which needs CUDA): its run
    directory's layout, with events in the reference's own tags and steps (cumulative env
    steps of all ranks), as trainers.unilab documents them."""
    import argparse

    from sacscale.commands.train_reference import add_arguments
    from sacscale.trainers import unilab

    parser = argparse.ArgumentParser(prog="sacscale train-reference", allow_abbrev=False)
    add_arguments(parser)
    config = vars(parser.parse_args(args))
    log_dir = Path(config["log_dir"])
    ranks, envs, iterations = len(config["devices"].split(",")), config["num_envs"], config["iterations"]
    events = log_dir / unilab.LOG_ROOT_NAME / unilab.EVENT_SUBDIR / "2026-12-01_00-00-00_mujoco"
    writer = SummaryWriter(str(events))
    t0 = time.time()
    for it in range(1, iterations + 1):
        step, wall = it * envs * ranks, t0 + 0.2 * it
        fps = measured(5.0 * envs * ranks, config["seed"], log_dir.name, it)
        writer.add_scalar("Perf/total_fps", fps, step, walltime=wall)
        # each run's own episodes, as a real run's are (verify names runs that share them)
        writer.add_scalar("Train/mean_episode_length", measured(min(999.0, 40.0 * it), config["seed"], log_dir.name,
                                                                it, "length"), step, walltime=wall)
        writer.add_scalar("Train/mean_reward", measured(0.05 * it, config["seed"], log_dir.name, it, "reward"), step,
                          walltime=wall)
        # its backend step, 50 of the 200 ms per iteration (25%); its reward rates (before x ctrl_dt)
        # at 0.7 and 0.3 of their maxima (weights 2.0 and 1.5)
        writer.add_scalar("Perf/collector_env_step_backend_ms", 50.0, step, walltime=wall)
        writer.add_scalar("reward/tracking_lin_vel", 0.7 * 2.0, step, walltime=wall)
        writer.add_scalar("reward/tracking_ang_vel", 0.3 * 1.5, step, walltime=wall)
    writer.close()
    time.sleep(max(0.0, wall - time.time()))  # its events' times lie within its window, as a real run's do
    (log_dir / unilab.TRAINER_RECORD).write_text(json.dumps({"trainer": "unilab", "fake": True, "argv": [],
                                                              "overrides": config["override"]}))
    (log_dir / "run_config.json").write_text(json.dumps({"fake": True}))
    (log_dir / "train_meta.json").write_text(json.dumps({
        "trainer": "unilab", "fake": True, "status": "completed", "start_time": t0, "end_time": time.time(),
        "world_size": ranks,
        "devices": [f"cuda:{d}" for d in config["devices"].split(",")], "config": config}))
    print(f"fake reference trainer: {iterations} iterations, {ranks} rank(s)")
    return 0


def _fake_scores(baseline: dict) -> dict:
    """A policy's per-command scores: half the stand-still robot's errors, never falling."""
    return {**baseline, "normalised_tracking": {"lin_vel_xy": 0.9, "yaw_rate": 0.95},
            "rms_error": {k: v / 2 for k, v in baseline["rms_error"].items()}}


def fake_evaluation(args, meta: dict) -> dict:
    """What the real evaluate records (sacscale.eval.evaluate), every field of it, with the
    scores of a policy that cannot be simulated made up but pooled, and the stand-still
    robot's derived, as the real one's (verify derives them from the protocol)."""
    from sacscale.eval import limits, protocol
    from sacscale.eval.pooling import actions_label, pooled_overall, ratios
    from sacscale.eval.stand_still import stand_still_per_command
    from sacscale.task.walk_rules import CONTROL_DT

    grid = protocol.grid_as_recorded()  # the real one's commands (verify compares them with the code's)
    envs, seconds = int(opt(args, "--envs-per-command", 8)), float(opt(args, "--seconds", 20))
    steps, settle_steps = limits.control_steps(seconds), limits.settle_steps(limits.SETTLE_S)
    still = stand_still_per_command(grid, envs, steps, settle_steps)
    per_command = {name: _fake_scores(scores) for name, scores in still.items()}
    for name, scores in per_command.items():
        scores["ratio_to_stand_still"] = ratios(scores, still[name])
    overall, still_overall = pooled_overall(per_command), pooled_overall(still)
    # what the real one records of the policy: its hash, its iteration and the model
    policy = Path(args[1]) / "checkpoints" / "final.pt"
    model = Path(opt(args, "--model"))
    model_sha = hashlib.sha256(model.read_bytes()).hexdigest()  # the one it trained on
    return {
        "fake": True, "checkpoint": args[1], "checkpoint_sha256": hashlib.sha256(policy.read_bytes()).hexdigest(),
        "iteration": meta["config"]["iterations"], "env_steps": meta["rank0_env_steps"],
        "protocol": {"commands": grid, "envs_per_command": envs, "num_envs": envs * len(grid), "seconds": seconds,
                     "control_dt": CONTROL_DT, "steps": steps, "settle_s": limits.SETTLE_S,
                     "settle_steps": settle_steps, "seed": protocol.SEED, "sim_threads": int(opt(args, "--threads", 1)),
                     "torch_threads": protocol.TORCH_THREADS, "actions": actions_label(protocol.NOISE_SCALE),
                     "noise_scale": protocol.NOISE_SCALE, "tilt_obs": meta["config"]["tilt_obs"],
                     **{k: list(v) if isinstance(v, tuple) else v for k, v in protocol.TASK_SETTINGS.items()},
                     "velocity": protocol.VELOCITY, "falls": protocol.FALLS, "model": str(model),
                     "model_sha256": model_sha, "checkpoint_model_sha256": model_sha},
        "overall": overall, "action_std_mean": 0.5, "per_command": per_command,
        "baseline_stand_still": {"overall": still_overall, "per_command": still},
        "ratio_to_stand_still": ratios(overall, still_overall), "sim_errors": 0, "timing": {"wall_s": 0.1}}


def _comparison(tensor: str, tolerance: float, norm: bool = False) -> dict:
    """One comparison as the real probe writes it (learner: normwise; trainer path: max)."""
    return {"tensor": tensor, "max_abs_diff": 1e-9, "scale": 1.0, "max_rel_diff": 1e-9,
            **({"norm_rel_diff": 1e-9} if norm else {}), "criterion": "norm" if norm else "max",
            "rel_diff": 1e-9, "tolerance": tolerance, "pass": True, "judged": True}


def fake_probe(args: list[str]) -> dict:
    """A passing probe record of the real one's shape, on the devices it was given, with the
    code's tolerances (torch-free, as this stand-in is)."""
    from sacscale.learn.state_names import SEEDED_STATE, STATE_TENSORS
    from sacscale.parallel.probe_settings import SYNC_REL_TOL, TOLERANCE_REASON, TOLERANCES
    from sacscale.parallel.probe_tensors import compared_tensors

    devices = ["cpu" if d == "cpu" else f"cuda:{d}" for d in opt(args, "--devices").split(",")]
    apart = 0.1 if len(devices) > 1 else 0.0  # only the networks' weights follow a rank's seed
    spreads = {"before": {k: apart if k in SEEDED_STATE else 0.0 for k in STATE_TENSORS},
               "after": dict.fromkeys(STATE_TENSORS, 0.0)}
    tolerance = {"param": TOLERANCES["float32"]["param_rel"], "grad": TOLERANCES["float32"]["grad_rel"],
                 "sync": SYNC_REL_TOL}
    record = {"pass": True, "mode": "learner", "world_size": len(devices), "devices": devices,
              "backend": "gloo" if devices[0] == "cpu" or len(set(devices)) < len(devices) else "nccl",
              "iterations": int(opt(args, "--iterations")), "torch": torch_version(),
              "tolerance": TOLERANCES["float32"], "sync_tolerance": SYNC_REL_TOL, "autocast_dtype": "float32",
              "tolerance_reason": TOLERANCE_REASON,
              "comparisons": [_comparison(name, tolerance[name.split("/")[0]], norm=name.startswith("param/"))
                              for name in compared_tensors("learner")]}
    if "--trainer-iterations" in args:
        checks = ("hooks_installed_by_trainer", "learner_updated", "broadcast_by_trainer", "ranks_started_apart",
                  "ranks_bit_identical_after", "sync_within_tolerance")
        record["trainer_path"] = {
            "pass": True, "mode": "trainer", "world_size": len(devices), "devices": devices,
            "iterations": int(opt(args, "--trainer-iterations")), "checks": dict.fromkeys(checks, True),
            "learner_updates_per_rank": 1, "rank_spread_before_broadcast_max_abs": spreads["before"],
            "rank_spread_max_abs": spreads["after"],
            "comparisons": [_comparison(name, SYNC_REL_TOL) for name in compared_tensors("trainer")],
            "sync_tolerance": SYNC_REL_TOL}
    return record


def main():
    args = sys.argv[1:]
    cmd = args[0] if args else ""
    if cmd == "train":
        return train(args[1:])
    if cmd == "train-reference":
        return train_reference(args[1:])
    if cmd == "reference-env":  # the reference's environment is not needed by a fake reference trainer
        Path(opt(args, "--output")).write_text(json.dumps({"fake": True, "python": opt(args, "--python"),
                                                           "unilab": "1.5.2", "packages": {"unilab": "1.5.2"}}))
        return 0
    if cmd == "probe":
        Path(opt(args, "--output")).write_text(json.dumps(fake_probe(args)))
        return 0
    if cmd == "prepare-model":
        out = Path(opt(args, "--output-dir"))
        out.mkdir(parents=True, exist_ok=True)
        (out / "g1_walk_flat.mjb").write_bytes(b"fake model")
        digest = hashlib.sha256(b"fake model").hexdigest()
        Path(opt(args, "--json")).write_text(json.dumps({"file": "g1_walk_flat.mjb", "sha256": digest}))
        return 0
    if cmd == "evaluate":  # the fake model cannot be simulated: a result of the real one's shape
        meta = json.loads((Path(args[1]) / "train_meta.json").read_text())
        Path(opt(args, "--output")).write_text(json.dumps(fake_evaluation(args, meta)))
        return 0
    if cmd == "render-best":  # the real choice; a 1x1 image, since the fake model cannot be simulated
        from sacscale.eval.best import best_run

        evals = args[args.index("--evaluations") + 1:]
        evals = evals[:next((i for i, a in enumerate(evals) if a.startswith("--")), len(evals))]
        choice = best_run({Path(p).stem: json.loads(Path(p).read_text()) for p in evals})
        Path(opt(args, "--output")).parent.mkdir(parents=True, exist_ok=True)
        from PIL import Image  # in the format the name asks for (the pipeline's: WebP)

        Image.new("RGB", (1, 1)).save(opt(args, "--output"))
        Path(opt(args, "--record")).write_text(json.dumps(choice | {
            "fake": True, "video": Path(opt(args, "--output")).name, "seconds": float(opt(args, "--seconds", 12)),
            "commands": "0.5,0,0:4", "fps": float(opt(args, "--fps", 10))}))
        return 0
    if cmd == "verify-env":  # the real one, minus the checks on code that a fake replaces
        if "--require-commands" in args:
            i = args.index("--require-commands")
            del args[i:i + 2]
        # render-best is faked too (a fixed GIF): whether this machine can render offscreen
        # is no matter for a stand-in pipeline
        args = [a for a in args if a not in ("--require-graph-hooks", "--require-render")]
        if os.environ.get("FAKE_CUDA_DEVICES"):  # a GPU plan's test on a CPU machine
            from sacscale.pipeline import environment

            real_torch_info = environment.torch_info

            def torch_info():
                info = real_torch_info()
                n = int(os.environ["FAKE_CUDA_DEVICES"])
                gpus = [{"index": i, "name": "fake GPU", "memory_mib": 0, "fake": True} for i in range(n)]
                return {**info, "cuda_devices": n, "gpus": gpus}

            environment.torch_info = torch_info
    from sacscale.cli import main as real_main

    return real_main(args)


if __name__ == "__main__":
    sys.exit(main())
