"""The reference trainer's options (`sacscale train-reference`), below the command that
runs it: the verifier parses a recorded command with the same parser."""

from __future__ import annotations

import argparse
import os

from sacscale.checks import seed_arg

DEFAULT_PYTHON = ".venv-ref/bin/python"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--devices", default="0", help="CUDA device indices, comma list (one rank each)")
    parser.add_argument("--num-envs", type=int, default=2048, help="environments per rank (default: 2048)")
    parser.add_argument("--iterations", type=int, default=1000, help="training iterations (default: 1000)")
    parser.add_argument("--seed", type=seed_arg, default=1, help="its algo.seed (default: 1)")
    parser.add_argument("--collector-cpu-ids", default="",
                        help="one CPU list per rank, ';'-separated ('1-15' or '1-15;17-31'); empty: its own default")
    parser.add_argument("--log-dir", required=True, help="run directory (must not exist or be empty)")
    parser.add_argument("--reference-python", default=os.environ.get("SACSCALE_REFERENCE_PYTHON", DEFAULT_PYTHON),
                        help="interpreter of the reference environment (default: $SACSCALE_REFERENCE_PYTHON or "
                             f"{DEFAULT_PYTHON})")
    parser.add_argument("--meshes", default=os.environ.get("SACSCALE_REFERENCE_MESHES") or None,
                        help="folder of the G1's visual mesh files (STL) for the reference's scene (default: "
                             "$SACSCALE_REFERENCE_MESHES, else the asset package's)")
    parser.add_argument("--timeout-s", type=float, default=3600.0,
                        help="longest run before it is stopped (default: 3600)")
    parser.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                        help="a further Hydra override of the reference (repeatable), e.g. algo.batch_size=4096")


def build_parser() -> argparse.ArgumentParser:
    """The parser of `sacscale train-reference` (abbreviations refused, as every sacscale parser)."""
    parser = argparse.ArgumentParser(prog="sacscale train-reference", allow_abbrev=False)
    add_arguments(parser)
    return parser
