"""The segmented capture (hooks between graph segments) with compiled losses, on CUDA.

On one H200 the probe found that compiled losses inside a segmented capture give wrong
gradients (relative errors 0.04-1.5, different from run to run; eager losses in the same
segments and compiled losses in one graph are right): docs/faults.md. The learner refuses
the combination; the second test reproduces the fault with the refusal lifted and is
expected to fail until its cause is found (strict: a pass means the refusal can go).
"""

import pytest
import torch

from sacscale.learn import learner as learner_module

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

DEVICE = "cuda"


def test_compiled_losses_between_graph_segments_are_refused(learn):
    cfg = learn.small_cfg(amp_dtype="float32")
    with pytest.raises(ValueError, match="compiled losses with the hooks between graph segments"):
        learn.make_learner(cfg, external=True, device=DEVICE, compile=True, hooks_in_graph=False)


@pytest.mark.xfail(strict=True, reason="compiled losses in a segmented capture: wrong gradients (docs/faults.md)")
def test_compiled_losses_between_graph_segments_follow_the_one_graph(learn, monkeypatch):
    monkeypatch.setattr(learner_module, "COMPILED_SEGMENTS_ALLOWED", True)
    cfg = learn.small_cfg(actor_hidden=(512, 256, 128), critic_hidden=(768, 384, 192), num_atoms=101,
                          batch_size=512, replay_per_env=256, amp_dtype="float32")
    one = learn.make_learner(cfg, external=True, device=DEVICE, compile=True)
    split = learn.make_learner(cfg, external=True, device=DEVICE, compile=True, hooks_in_graph=False)
    for learner in (one, split):
        learner.set_gradient_graph_hooks([lambda name, flat: None])  # a hook point per optimizer step
    init = learn.state(one)
    for it in range(3):
        r = learn.random_randoms(cfg, learn.ROWS, seed=500 + it).to(DEVICE)
        for learner in (one, split):
            learner.randoms.copy_(r)
            learner.update()
    torch.cuda.synchronize()
    a, b = learn.state(split), learn.state(one)
    for k in ("actor", "critic"):
        moved = (b[k] - init[k]).norm()
        assert moved > 0, k
        assert ((a[k] - b[k]).norm() / moved).item() < 1e-3, k
    one.close()
    split.close()
