import pytest
import torch

from sacscale.learn import c51

# 5 atoms on [-2, 2]: support [-2, -1, 0, 1, 2], spacing 1.
V_MIN, V_MAX = -2.0, 2.0


def proj(probs, reward, discount):
    return c51.project(torch.tensor([probs]), torch.tensor([reward]), torch.tensor([discount]), V_MIN, V_MAX)[0]


def test_hand_worked_split():
    # r = 0.5, discount 0.5: tz = 0.5 + 0.5 z = [-0.5, 0, 0.5, 1, 1.5] -> positions [1.5, 2, 2.5, 3, 3.5]
    # p = [.1, .2, .3, .2, .2]:
    #   .1 at 1.5 -> .05 to atom 1, .05 to atom 2
    #   .2 at 2   -> .2 to atom 2 (exactly on an atom)
    #   .3 at 2.5 -> .15 to atom 2, .15 to atom 3
    #   .2 at 3   -> .2 to atom 3 (exactly on an atom)
    #   .2 at 3.5 -> .1 to atom 3, .1 to atom 4
    out = proj([0.1, 0.2, 0.3, 0.2, 0.2], 0.5, 0.5)
    torch.testing.assert_close(out, torch.tensor([0.0, 0.05, 0.4, 0.45, 0.1]), atol=1e-6, rtol=0)


def test_quarter_split_one_hot():
    # all mass at z = 1, r = 0.25, discount 1 -> 1.25: 3/4 to atom z=1, 1/4 to z=2
    out = proj([0.0, 0.0, 0.0, 1.0, 0.0], 0.25, 1.0)
    torch.testing.assert_close(out, torch.tensor([0.0, 0.0, 0.0, 0.75, 0.25]), atol=1e-6, rtol=0)


@pytest.mark.parametrize("reward,expected", [
    (0.3, [0.0, 0.0, 0.7, 0.3, 0.0]),    # terminal: every atom lands on r = 0.3
    (-1.0, [0.0, 1.0, 0.0, 0.0, 0.0]),   # exactly on an atom
    (2.0, [0.0, 0.0, 0.0, 0.0, 1.0]),    # exactly on the last atom
    (5.0, [0.0, 0.0, 0.0, 0.0, 1.0]),    # clamped to v_max
    (-7.0, [1.0, 0.0, 0.0, 0.0, 0.0]),   # clamped to v_min
])
def test_terminal_rows(reward, expected):
    out = proj([0.1, 0.2, 0.3, 0.2, 0.2], reward, 0.0)
    torch.testing.assert_close(out, torch.tensor(expected), atol=1e-6, rtol=0)


def test_clamped_tails_pile_up_at_the_ends():
    # discount 2 stretches the support to [-4, 4]: outer atoms clamp to the ends
    out = proj([0.2, 0.2, 0.2, 0.2, 0.2], 0.0, 2.0)
    torch.testing.assert_close(out, torch.tensor([0.4, 0.0, 0.2, 0.0, 0.4]), atol=1e-6, rtol=0)


def test_batch_conserves_mass_and_mean():
    g = torch.Generator().manual_seed(0)
    probs = torch.softmax(torch.randn(64, 101, generator=g), -1)
    reward = torch.rand(64, generator=g) - 0.5
    discount = 0.97 * (torch.rand(64, generator=g) > 0.2).float()
    support = c51.make_support(-20, 20, 101)
    # keep targets inside the support so nothing is clamped: the mean must be preserved
    probs[:, :3] = 0
    probs[:, -3:] = 0
    probs = probs / probs.sum(-1, keepdim=True)
    out = c51.project(probs, reward, discount, -20.0, 20.0)
    assert (out >= 0).all()
    torch.testing.assert_close(out.sum(-1), torch.ones(64), atol=1e-5, rtol=0)
    expected_mean = reward + discount * (probs * support).sum(-1)
    torch.testing.assert_close((out * support).sum(-1), expected_mean, atol=1e-4, rtol=0)


def test_cross_entropy_and_expected_value():
    support = c51.make_support(V_MIN, V_MAX, 5)
    logits = torch.log(torch.tensor([[0.1, 0.2, 0.3, 0.2, 0.2]]))
    torch.testing.assert_close(c51.expected_value(logits, support), torch.tensor([0.2]), atol=1e-6, rtol=0)
    target = torch.tensor([[0.0, 0.0, 1.0, 0.0, 0.0]])
    torch.testing.assert_close(c51.cross_entropy(logits, target), -torch.log(torch.tensor([0.3])), atol=1e-6, rtol=0)
