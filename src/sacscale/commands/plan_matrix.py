"""`sacscale plan-matrix [--lscpu FILE] [--nvidia-smi-topo FILE] [--output matrix.json]`.

The run matrix for this machine (or for recorded `lscpu -e=CPU,CORE,SOCKET,NODE` and
`nvidia-smi topo -m` outputs): per configuration its devices, one CPU pool and one
learner CPU list per rank, and a description; the rules are in sacscale.parallel.matrix.
`preset: auto` runs it on a CUDA machine that no named preset fits exactly.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from sacscale.atomic import write_json
from sacscale.commands._inputs import BadInput, read_text
from sacscale.commands._output_lock import holding_outputs
from sacscale.parallel import topology
from sacscale.parallel.matrix import PoolCoresError, plan_matrix
from sacscale.parallel.topology import TopologyError, load_topology
from sacscale.usage import say


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lscpu", metavar="FILE",
                        help="recorded `lscpu -e=CPU,CORE,SOCKET,NODE` (default: this machine's sysfs)")
    parser.add_argument("--nvidia-smi-topo", metavar="FILE", help="recorded `nvidia-smi topo -m` (default: run it)")
    parser.add_argument("--smt", action="store_true",
                        help="pools use every SMT thread of their cores (default: one thread per physical core)")
    parser.add_argument("--pool-cores", type=_cores_per_pool, metavar="N",
                        help="physical cores per pool (default: as many as the node with the fewest cores per GPU "
                             "allows)")
    parser.add_argument("--output", metavar="FILE", help="JSON file to write (atomically); default: standard output")


def _cores_per_pool(text: str) -> int:
    """A whole number of cores, 1 or more: a bad value is a usage error (exit 2), not a
    topology the machine lacks."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of cores") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value}: a pool needs at least 1 core")
    return value


def _recorded(path: str, what: str, parse):
    """A recorded tool output, read bounded (a pipe such as `<(lscpu -e)` is fine; /dev/zero,
    a FIFO nobody writes or binary are refused, naming the file) and parsed."""
    text = read_text(path, what, streams=True)
    if "\x00" in text:
        raise BadInput(f"{what} {path}: binary, not a recorded text output")
    try:
        return parse(text)
    except (ValueError, IndexError, KeyError) as exc:  # a parser's own error on text of another shape
        raise BadInput(f"{what} {path}: not a recorded output of that tool ({type(exc).__name__}: {exc})") from None


def _topology(args: argparse.Namespace):
    """load_topology, with the recorded files read here, bounded."""
    if not args.lscpu and not args.nvidia_smi_topo:
        return load_topology(None, None)
    if args.lscpu:
        cpus = _recorded(args.lscpu, "--lscpu", topology.parse_lscpu)
        allowed, cpu_src = None, args.lscpu
    else:
        cpus, allowed, cpu_src = topology.read_sysfs_cpus(), set(os.sched_getaffinity(0)), "sysfs"
    if args.nvidia_smi_topo:
        gpus = _recorded(args.nvidia_smi_topo, "--nvidia-smi-topo", topology.parse_nvidia_topo)
        gpu_src = args.nvidia_smi_topo
    else:
        gpus, gpu_src = topology.live_gpus()
    return topology.Topology(cpus, gpus), allowed, f"CPUs from {cpu_src}, GPUs from {gpu_src}"


def run(args: argparse.Namespace) -> int:
    with holding_outputs(("--output", args.output)):  # another command writing it meanwhile: refused at once
        try:
            topo, allowed, source = _topology(args)
        except (TopologyError, OSError) as exc:
            say(f"sacscale plan-matrix: error: {exc}", file=sys.stderr)
            return 1
        try:
            matrix = plan_matrix(topo, smt=args.smt, pool_cores=args.pool_cores, allowed=allowed)
        except TopologyError as exc:
            say(f"sacscale plan-matrix: error: {exc} ({source})", file=sys.stderr)
            return 2 if isinstance(exc, PoolCoresError) else 1  # the option asked for too much: bad input
        matrix["source"] = source
        if args.output:
            write_json(args.output, matrix)
        else:
            print(json.dumps(matrix, indent=2, sort_keys=True))
    say(f"sacscale plan-matrix: {', '.join(matrix['order'])}: {matrix['reason']}", file=sys.stderr)
    return 0
