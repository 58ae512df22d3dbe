"""GPU diagnostic: the learner captured as graph segments (hooks between them) against an eager
learner, hook point by hook point. Not collected by pytest (no test_ prefix); run on a CUDA machine:

    python tests/learn/gpu_segments_check.py compiled 2       # Inductor losses, segments
    python tests/learn/gpu_segments_check.py compiled-sync 2  # a device sync after every segment and hook
    python tests/learn/gpu_segments_check.py compiled-pgnccl 2  # plus a one-rank NCCL all-reduce hook
    # other words in the variant: eager, ingraph (one graph), nodonate (AOTAutograd buffer donation off),
    # pggloo (gloo all-reduce), obsnorm (observation normalisation on); BATCH=512 for a smaller batch

Both learners start from the same weights and take the same random numbers; a recording hook
keeps every gradient bucket as it reaches the hook. Prints one RESULT line (JSON): the first hook
point whose gradient differs by more than 1e-3 relative (null: none), and the state's relative gap.
"""
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(__file__))
import conftest as learn  # noqa: E402  (the CPU tests' learner helpers)

from sacscale.learn import learner as learner_module  # noqa: E402
from sacscale.parallel.grad_sync import allreduce_hooks  # noqa: E402


def recorder(store: list):
    def hook(name, flat):
        store.append((name, flat.detach().clone()))
    return hook


def synced_update(learner):
    """update() with a device sync after every segment's replay and every hook."""
    first = learner.update

    def update():
        if learner._graph is None:
            return first()
        for segment, point in learner._segments:
            segment.replay()
            torch.cuda.synchronize()
            if point is not None:
                for hook in learner._hooks:
                    hook(*point)
                torch.cuda.synchronize()
        learner.iterations += 1
    return update


def process_group_hooks(variant: str) -> list:
    if "pgnccl" not in variant and "pggloo" not in variant:
        return []
    import torch.distributed as dist
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=os.environ.get("MASTER_PORT", "29533"))
    nccl = "pgnccl" in variant
    dist.init_process_group("nccl" if nccl else "gloo", rank=0, world_size=1,
                            **({"device_id": torch.device("cuda:0")} if nccl else {}))
    return allreduce_hooks(1)


def main(variant: str, iters: int) -> dict:
    batch = int(os.environ.get("BATCH", "8192"))
    learner_module.COMPILED_SEGMENTS_ALLOWED = True
    if "nodonate" in variant:
        import torch._functorch.config as functorch_config
        functorch_config.donated_buffer = False
    cfg = learn.small_cfg(actor_hidden=(512, 256, 128), critic_hidden=(768, 384, 192), num_atoms=101,
                          obs_norm="obsnorm" in variant, batch_size=batch, replay_per_env=max(256, batch // 4),
                          amp_dtype="float32")
    tested = learn.make_learner(cfg, external=True, device="cuda", compile="eager" not in variant,
                                cuda_graph=True, hooks_in_graph="ingraph" in variant)
    reference = learn.make_learner(cfg, external=True, device="cuda", compile=False, cuda_graph=False)
    seen = {"tested": [], "reference": []}
    extra = process_group_hooks(variant)
    tested.set_gradient_graph_hooks([recorder(seen["tested"])] + extra)
    reference.set_gradient_graph_hooks([recorder(seen["reference"])] + extra)
    if "sync" in variant:
        tested.update = synced_update(tested)
    init = learn.state(reference)
    points = 2 * cfg.critic_updates + cfg.actor_updates + (1 if cfg.obs_norm else 0)
    first_bad, start = None, time.time()
    for it in range(iters):
        randoms = learn.random_randoms(cfg, learn.ROWS, seed=100 + it).to("cuda")
        for learner in (tested, reference):
            learner.randoms.copy_(randoms)
            learner.update()
        torch.cuda.synchronize()
        for k, ((name, got), (_, want)) in enumerate(zip(seen["tested"][-points:], seen["reference"][-points:])):
            rel = ((got - want).abs().max() / want.abs().max().clamp_min(1e-30)).item()
            if rel > 1e-3 and first_bad is None:
                first_bad = [it, k, name, rel]
    a, b = learn.state(tested), learn.state(reference)
    gap = {k: ((a[k] - b[k]).norm() / (b[k] - init[k]).norm().clamp_min(1e-12)).item() for k in a}
    result = {"variant": variant, "batch": batch, "first_bad": first_bad, "state_gap": gap,
              "segments": len(tested._segments), "seconds": round(time.time() - start, 1)}
    tested.close()
    reference.close()
    return result


if __name__ == "__main__":
    print("RESULT", json.dumps(main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 2)), flush=True)
