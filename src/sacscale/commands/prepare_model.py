"""`sacscale prepare-model`: build the G1 task model, save it as .mjb, record its hash,
summary and a short physics cost measurement."""

from __future__ import annotations

import argparse
import contextlib
import os
import re
from pathlib import Path

from sacscale.atomic import json_text, move_into_place, staged_path
from sacscale.checks import int_in
from sacscale.commands._inputs import BadInput, refuse_names_not_text, refuse_one_file, refuse_unwritable_outputs
from sacscale.commands._output_lock import holding_outputs
from sacscale.sim.step_limits import envs_per_cpu_problem, threads_problem
from sacscale.stopping import stops_held

MODEL_FILE = "g1_walk_flat.mjb"


def _sha256_hex(text: str) -> str:
    """--expect-sha256's type: 64 hex digits (a typo was found only after the model was built
    and saved, as a mismatch, exit 1, the unpinned model left behind)."""
    if not re.fullmatch(r"[0-9a-fA-F]{64}", text):
        raise argparse.ArgumentTypeError(f"{text[:80]!r} is not a SHA-256 (64 hex digits)")
    return text.lower()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output-dir", required=True, help=f"where to write {MODEL_FILE}")
    parser.add_argument("--json", default=None, help="summary JSON (default OUTPUT_DIR/model.json)")
    parser.add_argument("--from-mjb", default=None,
                        help="take this compiled model instead of building it (machines without the "
                             "asset package); it is loaded, re-saved and hashed the same way (refused where another "
                             "user owns it or may write it)")
    parser.add_argument("--expect-sha256", default=None, type=_sha256_hex,
                        help="fail unless the prepared model has this SHA-256 (pins a model across machines)")
    parser.add_argument("--num-envs", type=int_in(1, 1 << 20), default=64,
                        help="sims for the cost measurement (default 64)")
    parser.add_argument("--threads", type=int_in(1, 8192), default=1,
                        help="threads for the cost measurement, at most the CPUs this process may use (default 1)")
    parser.add_argument("--steps", type=int_in(1, 1_000_000), default=50,
                        help="timed env steps of the measurement (default 50)")


def _place_together(mjb_tmp: Path, mjb: Path, json_tmp: Path, json_path: Path) -> None:
    """The record first, the model last, with no stop landing between: whoever finds the model
    finds its record beside it. A model that cannot be placed takes its record with it."""
    with stops_held():
        move_into_place(json_tmp, json_path)
        try:
            move_into_place(mjb_tmp, mjb)
        except BaseException:
            json_path.unlink(missing_ok=True)
            raise


def _remove_made(made: list[Path]) -> None:
    """The folders made for an output that was not written (deepest first, only empty ones:
    only ours), as a refusal or a stop leaves nothing."""
    for folder in made:
        with contextlib.suppress(OSError):
            folder.rmdir()


def run(args: argparse.Namespace) -> int:
    cpus = len(os.sched_getaffinity(0))
    # the record's rate per thread: of threads at work, not of threads taking turns on fewer CPUs
    # (evaluate's bound); one MuJoCo step of all the envs is deaf to a stop: env-bench's bound
    too_many = threads_problem(args.threads, cpus) or envs_per_cpu_problem(args.num_envs, args.threads, cpus)
    if too_many:
        raise BadInput(too_many)
    # the saved model is loaded back from the folder by MuJoCo, which takes only text names:
    # a folder whose name is not UTF-8 was made and left holding the model, then refused
    refuse_names_not_text(("--output-dir", args.output_dir))
    out_dir = Path(args.output_dir)
    mjb = out_dir / MODEL_FILE
    json_path = Path(args.json) if args.json else out_dir / "model.json"
    json_option = "--json" if args.json else "--output-dir's model.json"
    refuse_one_file((f"--output-dir's {MODEL_FILE}", mjb), (json_option, json_path))
    # every output judged before the build: a refused summary left the built model behind
    refuse_unwritable_outputs([("--output-dir", out_dir, True), (f"--output-dir's {MODEL_FILE}", mjb, False),
                               (json_option, json_path, False)])
    made = [folder for folder in (out_dir, *out_dir.parents) if not folder.exists()]
    placed = False
    try:
        # two at once into one folder left one's record beside the other's model
        with holding_outputs((json_option, json_path), folders=(("--output-dir", args.output_dir),)):
            placed = _prepare(args, mjb, json_path)
    finally:
        if not placed:
            _remove_made(made)
    return 0


def _prepare(args: argparse.Namespace, mjb: Path, json_path: Path) -> bool:
    """Build, save, check and measure the model; the .mjb and its record are written to
    temporary files and placed together at the end: a failure or a stop leaves neither."""
    # MuJoCo and numpy load here, after the option checks: a refusal answers without them
    from sacscale.commands._prepared_model import (
        reloaded_and_measured,
        save_model,
        source_model,
        summary_record,
        write_staged,
    )

    model, source = source_model(args)
    with staged_path(mjb) as mjb_tmp, staged_path(json_path) as json_tmp:
        sha = save_model(model, mjb_tmp, mjb)
        if args.expect_sha256 and sha != args.expect_sha256:
            raise SystemExit(f"sacscale prepare-model: error: {mjb} has SHA-256 {sha}, expected {args.expect_sha256}")
        reloaded, cost = reloaded_and_measured(args, mjb_tmp, mjb, sha)
        summary = summary_record(args, mjb_tmp, MODEL_FILE, sha, source, reloaded, cost)
        write_staged(json_tmp, json_text(summary).encode(), json_path)
        _place_together(mjb_tmp, mjb, json_tmp, json_path)
    s = summary["summary"]
    print(
        f"{mjb} sha256 {sha[:16]}… nq={s['nq']} nv={s['nv']} nu={s['nu']} colliding geoms={s['ngeom_colliding']}"
        f" standing contacts={s['standing']['ncon']}; {cost['env_steps_per_s']:.0f} env steps/s"
        f" ({args.num_envs} envs, {args.threads} thread(s))"
    )
    return True
