"""`sacscale plan-matrix [--lscpu FILE] [--nvidia-smi-topo FILE] [--output matrix.json]`.

The run matrix for this machine (or for recorded `lscpu -e=CPU,CORE,SOCKET,NODE` and
`nvidia-smi topo -m` outputs): per configuration its devices, one CPU pool and one
learner CPU list per rank, and a description; the rules are in sacscale.parallel.topology.
`preset: auto` runs it on a CUDA machine that no named preset fits exactly.
"""

from __future__ import annotations

import argparse
import json
import sys

from sacscale.parallel.topology import TopologyError, load_topology, plan_matrix
from sacscale.evidence.atomic import write_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--lscpu", metavar="FILE", help="recorded `lscpu -e=CPU,CORE,SOCKET,NODE` (default: this machine's sysfs)")
    parser.add_argument("--nvidia-smi-topo", metavar="FILE", help="recorded `nvidia-smi topo -m` (default: run it)")
    parser.add_argument("--smt", action="store_true", help="pools use every SMT thread of their cores (default: one thread per physical core)")
    parser.add_argument("--pool-cores", type=int, metavar="N", help="physical cores per pool (default: as many as the node with the fewest cores per GPU allows)")
    parser.add_argument("--output", metavar="FILE", help="JSON file to write (atomically); default: standard output")


def run(args: argparse.Namespace) -> int:
    try:
        topo, allowed, source = load_topology(args.lscpu, args.nvidia_smi_topo)
    except (TopologyError, OSError) as exc:
        print(f"sacscale plan-matrix: error: {exc}", file=sys.stderr)
        return 1
    try:
        matrix = plan_matrix(topo, smt=args.smt, pool_cores=args.pool_cores, allowed=allowed)
    except TopologyError as exc:
        print(f"sacscale plan-matrix: error: {exc} ({source})", file=sys.stderr)
        return 1
    matrix["source"] = source
    if args.output:
        write_json(args.output, matrix)
    else:
        print(json.dumps(matrix, indent=2, sort_keys=True))
    print(f"sacscale plan-matrix: {', '.join(matrix['order'])}: {matrix['reason']}", file=sys.stderr)
    return 0
