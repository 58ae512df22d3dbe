"""The learner's CUDA graph: warm-up, undoing the warm-up, and capture of one iteration,
whole or as segments split at the gradient hooks (see learner.py's module docstring)."""

from __future__ import annotations

import warnings

import torch


def snapshot(learner) -> dict:
    """The learning state that the graph warm-up changes: state tensors, AdamW state
    (empty before the first step) and the normaliser's pending flag."""
    snap = {"tensors": {name: t.detach().clone() for name, t in learner.state_tensors().items()},
            "optimizers": {name: {id(p): {k: v.clone() if torch.is_tensor(v) else v for k, v in st.items()}
                                  for p, st in opt.state.items()}
                           for name, opt in learner.optimizers.items()}}
    if learner.obs_norm:
        snap["fresh_pending"] = learner._fresh_pending.clone()
    snap["target_faults"] = learner._target_faults.clone()  # warm-up iterations must not count
    return snap

@torch.no_grad()
def restore(learner, snapshot: dict) -> None:
    """Put back the learning state of `snapshot`; AdamW state that did not exist then
    is reset to its initial state (zero moments and step count)."""
    for name, t in learner.state_tensors().items():
        t.copy_(snapshot["tensors"][name])
    for name, opt in learner.optimizers.items():
        saved = snapshot["optimizers"][name]
        for p, state in opt.state.items():
            for key, value in state.items():
                if not torch.is_tensor(value):
                    continue
                before = saved.get(id(p), {}).get(key)
                if before is None:
                    value.zero_()  # exp_avg, exp_avg_sq and the device step count
                else:
                    value.copy_(before)
    if learner.obs_norm:
        learner._fresh_pending.copy_(snapshot["fresh_pending"])
    learner._target_faults.copy_(snapshot["target_faults"])
    for flat in learner.flat.values():
        if flat.grad is not None:
            flat.grad.zero_()


def capture(learner) -> tuple[torch.cuda.Stream, torch.cuda.CUDAGraph, list]:
    """Warm up on a side stream, restore the pre-warm-up state, capture one iteration
    on the same stream. Returns the stream, the graph (the first segment's where the
    hooks run between segments) and the segments with their hook points (else empty)."""
    device = learner.device
    torch.cuda.synchronize(device)
    before = snapshot(learner)
    stream = torch.cuda.Stream(device)
    stream.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(stream), warnings.catch_warnings():
        # capturable AdamW warns when it steps outside a capture: expected in warm-up
        warnings.filterwarnings("ignore", message=".*capturable=True.*")
        for _ in range(learner.cfg.graph_warmup_iters):
            learner._iteration()
        restore(learner, before)
    stream.synchronize()
    graph = torch.cuda.CUDAGraph()
    segments: list = []
    if learner.hooks_in_graph or not learner._hooks:
        with torch.cuda.graph(graph, stream=stream, capture_error_mode=learner.cfg.capture_error_mode):
            learner._iteration()
    else:
        segments = capture_segments(learner, graph, stream)
    torch.cuda.current_stream(device).wait_stream(stream)
    torch.cuda.synchronize(device)
    return stream, graph, segments


def capture_segments(learner, first: torch.cuda.CUDAGraph, stream: torch.cuda.Stream) -> list:
    """Capture one iteration as a chain of graphs that share one memory pool: each hook
    call ends the segment being captured (remembering the bucket the hook was to run on)
    and begins the next, so replaying the segments in order with the hooks in between
    runs the iteration with every kernel graphed but the hooks'."""
    pool = torch.cuda.graph_pool_handle()
    mode = learner.cfg.capture_error_mode
    segments: list[list] = [[first, None]]
    hooks = learner._hooks

    def split(name: str, bucket: torch.Tensor) -> None:
        segments[-1][0].capture_end()
        segments[-1][1] = (name, bucket)
        nxt = torch.cuda.CUDAGraph()
        nxt.capture_begin(pool=pool, capture_error_mode=mode)
        segments.append([nxt, None])

    learner._hooks = [split]
    try:
        with torch.cuda.stream(stream):
            first.capture_begin(pool=pool, capture_error_mode=mode)
            try:
                learner._iteration()
            finally:
                segments[-1][0].capture_end()
    finally:
        learner._hooks = hooks
    return [(g, point) for g, point in segments]
