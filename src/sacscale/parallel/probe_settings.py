"""The correctness probe's settings and the constants it judges by, without torch: the probe
(sacscale.parallel.probe) runs with them, `sacscale probe` offers them as its options, and
verify (sacscale.evidence.probe_code_settings, .probe_plan) derives from them what a
record must say, so the three cannot drift apart."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from sacscale.learner_limits import REFERENCE_NETWORKS, learner_size_problem
from sacscale.parallel.topology import backend_for, shares_cuda_device

# Tolerances, relative: a gradient's error against the largest gradient entry of its
# bucket; a parameter's error against the largest change any entry made from its initial
# value (so the test is about the update, not about the much larger weights).
# float32 (the default, also on CUDA): only summation order differs (per-rank means
# averaged vs one mean; compiled vs eager kernels), ~1e-6 in the gradients; AdamW
# divides by sqrt(v), which magnifies that on entries whose gradient is near zero, one
# entry at a time; so parameters are judged normwise (2-norm of the difference against
# 2-norm of the reference's change). Measured on CPU, fp32, 2 gloo ranks, 2-5 iterations,
# seeds 0-2: elementwise up to 4.7e-3 of the largest change (seed 0, one actor entry),
# normwise at most 5.2e-5; which seed shows an outlier depends on the CPU's kernels.
# bfloat16 autocast: 8 mantissa bits (~4e-3 per rounding) and compiled kernels that
# round at other places than eager ones; gradients still agree to ~1e-2, but AdamW's
# nearly sign-like first steps turn rounding on near-zero gradient entries into
# whole-step parameter differences (measured on the H200: 0.33 of the actor's largest
# move after 3 iterations), so in bf16 only the gradients decide the verdict.
TOLERANCES = {
    "float32": {"grad_rel": 1e-4, "param_rel": 1e-3},  # param_rel: normwise
    "bfloat16": {"grad_rel": 5e-2, "param_rel": None},
}
AMP_DTYPES = tuple(TOLERANCES)

# The sync itself, judged exactly in every dtype: each bucket's all-reduced gradient (the
# hook's output) against an fp32 reference of what it must be, the float64 mean of the
# ranks' own gradients (the hook's input, gathered after the iterations), relative to the
# largest entry of that mean. The all-reduce sums N float32 values, so at most about
# N * 2^-24 ~ 5e-7 for N = 8 may differ; a 0.1% error on one rank's gradient moves the
# mean by 1e-3 / N of that rank's gradient, >= 1.25e-4 for N <= 8 at comparable
# magnitudes, so it fails by an order of magnitude or more, in bf16 as in fp32 (autocast
# changes what each rank computes, not the sync of it).
SYNC_REL_TOL = 1e-5

# Ways to break the sync on purpose (tests): over two or more ranks the probe must fail
# for each (with one rank there is nothing to break).
#   sum           the hook sums without dividing by the world size
#   no_allreduce  the hook does nothing (every rank keeps its own gradient)
#   no_broadcast  the start-up broadcast does nothing (ranks start from their own seeds)
#   scale_rank1   rank 1's gradient is multiplied by 1.001 before the all-reduce
MUTATIONS = ("sum", "no_allreduce", "no_broadcast", "scale_rank1")
# The probe's record of how its tolerances were chosen (see TOLERANCES and SYNC_REL_TOL).
TOLERANCE_REASON = (
    "relative errors: gradients against the largest gradient entry of their bucket "
    "(last optimizer step of the last iteration, elementwise), parameters normwise: "
    "the 2-norm of the difference against the 2-norm of the change from their "
    "initial value. float32: only summation order differs, and AdamW magnifies it on "
    "near-zero gradient entries, one entry at a time (hence normwise). bfloat16: 8 mantissa bits "
    "(~4e-3 per rounding); there AdamW turns rounding on near-zero gradients into "
    "whole-step parameter differences, so only gradients are judged in bf16. "
    "sync/*: the all-reduced gradient against the float64 mean of the ranks' own "
    f"gradients, {SYNC_REL_TOL:g} relative in every dtype: the float32 sum of N values "
    "differs by at most ~N x 2^-24, a 0.1% error on one rank of N <= 8 by >= 1.25e-4."
)


@dataclass
class ProbeSettings:
    devices: list[str]
    iterations: int = 3
    compile_loss: bool = False
    batch_size: int = 0      # per rank; 0: 64 on CPU, 8192 on CUDA
    replay_rows: int = 0     # 0: 4096 on CPU, 65536 on CUDA
    seed: int = 0
    grad_sync: bool = True   # False only to show that the probe catches unsynced ranks (no command option)
    amp_dtype: str = "float32"  # autocast of both sides; "bfloat16" is the training setting on CUDA
    mutation: str | None = None  # one of MUTATIONS: break the sync on purpose (tests: the probe must fail)
    # SACConfig values replacing the reference's (e.g. actor_hidden, critic_hidden, num_atoms):
    # smaller networks make the probe's own tests cheap; empty: the networks that are trained
    learner: dict = field(default_factory=dict)

    def resolved(self) -> "ProbeSettings":
        cuda = self.devices[0] != "cpu"
        if self.mutation is not None and self.mutation not in MUTATIONS:
            raise ValueError(f"mutation: {self.mutation!r} is not one of {', '.join(MUTATIONS)}")
        return dataclasses.replace(
            self,
            batch_size=self.batch_size or (8192 if cuda else 64),
            replay_rows=self.replay_rows or (65536 if cuda else 4096),
        )


def hooks_in_graph(devices: list[str]) -> bool:
    """The all-reduce runs inside the learner's CUDA graph, except where ranks share a GPU:
    those sync through gloo between graph segments, as the trainer does."""
    return not shares_cuda_device(devices)


def compiles_losses(s: ProbeSettings) -> bool:
    """Compiled losses: asked for, on CUDA, with the sync inside the one graph (compiled
    losses in a segmented capture gave wrong gradients, docs/faults.md; only the tests that
    hunt that cause allow them, sacscale.learn.learner.COMPILED_SEGMENTS_ALLOWED)."""
    return s.compile_loss and s.devices[0] != "cpu" and hooks_in_graph(s.devices)


def reference_batch(batch_per_rank: int, world_size: int) -> int:
    """The single-process reference learns from the ranks' batches together."""
    return batch_per_rank * world_size


def size_problem(s: ProbeSettings) -> str | None:
    """Why a probe of `s` (resolved) would hold more than a learner may (the bound `train`
    judges its batch by, sacscale.learner_limits), before any rank starts: each rank learns
    from its own batch, but the single-process reference on rank 0 learns from every rank's
    rows at once, so the reference's batch (batch x ranks) is the one judged; the networks
    are the trained ones, or the probe's own smaller `learner` sizes (tests)."""
    world = len(s.devices)
    sizes = {**REFERENCE_NETWORKS, **{k: v for k, v in s.learner.items() if k in REFERENCE_NETWORKS}}
    sizes["batch_size"] = reference_batch(s.batch_size, world)

    def named(name: str) -> str:
        if name != "batch_size":
            return name if name not in s.learner else f"the probe's learner {name}"
        if world == 1:
            return "--batch-size"
        return (f"--batch-size {s.batch_size} x {world} ranks of --devices (the single-process reference "
                "learns from all their rows at once) =")

    return learner_size_problem(sizes, named)


def recorded_settings(s: ProbeSettings) -> dict:
    """The settings a probe of `s` (resolved) writes into its record."""
    cuda = s.devices[0] != "cpu"
    return {
        "mode": "learner",  # the trainer path's record says "trainer" (sacscale.train.probe_settings)
        "world_size": len(s.devices),
        "devices": s.devices,
        "backend": backend_for(s.devices),
        "iterations": s.iterations,
        "batch_per_rank": s.batch_size,
        "reference_batch": reference_batch(s.batch_size, len(s.devices)),
        "replay_rows": s.replay_rows,
        "compile_loss": compiles_losses(s),
        "grad_sync": s.grad_sync,
        "mutation": s.mutation,
        "allreduce_in_cuda_graph": cuda and hooks_in_graph(s.devices),
        "autocast_dtype": s.amp_dtype,
        "tolerance": TOLERANCES[s.amp_dtype],
        "sync_tolerance": SYNC_REL_TOL,
        "tolerance_reason": TOLERANCE_REASON,
    }


# Every field of the probe's record (correctness.json): the settings above, what the ranks
# did (sacscale.parallel.probe), and `trainer_path`, which `sacscale probe
# --trainer-iterations` adds. The report shows these fields only and verify names any other
# key: the record's numbers are checked, a sentence added beside them would not be.
PROBE_RECORD_FIELDS = (
    "pass", "mode", "world_size", "devices", "backend", "iterations", "batch_per_rank", "reference_batch",
    "replay_rows", "compile_loss", "grad_sync", "mutation", "allreduce_in_cuda_graph", "autocast_dtype",
    "tolerance", "sync_tolerance", "tolerance_reason", "ranks_started_apart", "initial_weights_identical",
    "ranks_identical_after", "rank_spread_before_broadcast_max_abs", "rank_spread_max_abs", "comparisons", "torch",
    "seconds", "learner_overrides", "trainer_path",
)
# every column of a comparison row (sacscale.parallel.probe: its comparisons and sync check)
COMPARISON_FIELDS = ("tensor", "max_abs_diff", "scale", "max_rel_diff", "norm_rel_diff", "criterion", "rel_diff",
                     "tolerance", "pass", "judged")
