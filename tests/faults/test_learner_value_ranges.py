"""Learner settings that passed every check and broke later: `{"mean_clip": -1}` trained a
policy whose mean is -1 for every input (exit 0); `{"v_min": -1e308, "v_max": 1e308}` passed
planning and failed in the run with an overflow naming no setting; `actor_hidden: [1e12]` and
`num_atoms: 1e11` failed in torch's allocator. Now every numeric SACConfig field has a range
(sacscale.checks._RANGES) and the fields that bound each other a rule (SACConfig), named in
one line before anything starts; the reference's values, the presets' and the committed
sets' pass."""

import json
from dataclasses import fields
from pathlib import Path

import pytest
import yaml
from test_bad_input import run_cli

from sacscale.checks import _RANGES, check_learner_values
from sacscale.learn.config import SACConfig

REPO = Path(__file__).resolve().parents[2]
NUMERIC = ("int", "float", "int | None", "tuple[int, ...]", "tuple[float, float]")


def test_every_numeric_learner_setting_has_a_range():
    numeric = {f.name for f in fields(SACConfig) if str(f.type) in NUMERIC}
    assert numeric - set(_RANGES) == set()


@pytest.mark.parametrize("extra, message", [
    ({"mean_clip": -1}, "--extra mean_clip must be in [0.1, 100], got -1"),
    ({"mean_clip": 0}, "--extra mean_clip must be in [0.1, 100], got 0"),
    ({"obs_norm_eps": -1e-9}, "--extra obs_norm_eps must be in [1e-08, 100], got -1e-09"),
    ({"v_min": -1e308, "v_max": 1e308}, "--extra v_min must be in [-10000, 10000], got -1e+308"),
    ({"actor_hidden": [10**12]}, "--extra actor_hidden must be a list of 1 to 16 sizes in [1, 16384], got "
                                 "[1000000000000]"),
    ({"critic_hidden": [64] * 17}, "--extra critic_hidden must be a list of 1 to 16 sizes in [1, 16384], got "
                                   f"{[64] * 17}"),
    ({"num_atoms": 10**11}, "--extra num_atoms must be in [2, 4096], got 100000000000"),
    ({"lr": 1e30}, "--extra lr must be in [1e-06, 1], got 1e+30"),
    ({"alpha_init": 1e9}, "--extra alpha_init must be in [1e-06, 100], got 1000000000.0"),
    ({"log_std_max": 50}, "--extra log_std_max must be in [-20.0, 2.0], got 50"),
    ({"target_entropy": 30}, "--extra target_entropy must be in [-1000, 20.1] (a tanh-squashed policy's entropy "
                             "is at most 29 ln 2), got 30"),
    ({"weight_decay": 1e9}, "--extra weight_decay must be in [0, 100], got 1000000000.0"),
    ({"graph_warmup_iters": 10**9}, "--extra graph_warmup_iters must be in [1, 1000], got 1000000000"),
    ({"amp_dtype": "float64"}, "--extra amp_dtype must be 'auto', 'float32', 'bfloat16' or 'float16', got "
                               "'float64'"),
    # in range before, yet 0 (or 0 / 0) in float32: the mean 0 for every input, targets that never move,
    # no learning, no entropy bonus, a normaliser dividing by 0
    ({"mean_clip": 1e-300}, "--extra mean_clip must be in [0.1, 100], got 1e-300"),
    ({"tau": 1e-300}, "--extra tau must be in [0.0001, 1], got 1e-300"),
    ({"lr": 1e-300}, "--extra lr must be in [1e-06, 1], got 1e-300"),
    ({"alpha_init": 1e-300}, "--extra alpha_init must be in [1e-06, 100], got 1e-300"),
    ({"obs_norm_eps": 1e-300}, "--extra obs_norm_eps must be in [1e-08, 100], got 1e-300"),
    # the fields that bound each other
    ({"v_min": 0, "v_max": 1e-300}, "learner settings: need v_max - v_min >= 1 (the return support must hold a "
                                    "step's reward, of order 1), got 0 and 1e-300"),
    ({"lr": 0.5, "weight_decay": 3}, "learner settings: need lr x weight_decay < 1 (AdamW scales each weight by "
                                     "1 - lr x weight_decay a step), got 0.5 x 3"),
    ({"log_std_min": 0, "log_std_max": 0}, "learner settings: need log_std_min < log_std_max, got 0 and 0"),
])
def test_train_names_the_setting_before_anything_starts(tmp_path, capsys, extra, message):
    code, err, _ = run_cli(tmp_path, capsys, "--extra", json.dumps(extra))
    assert code == 2 and err.strip() == f"sacscale train: error: {message}", err


@pytest.mark.parametrize("args, message", [
    (["--num-critic-updates", "5000"], "--num-critic-updates must be at most 1,024, got 5000"),
    (["--replay-per-env", str(2**21)], "--replay-per-env must be at most 1,048,576, got 2097152"),
])
def test_the_options_that_set_learner_sizes_are_bounded_alike(tmp_path, capsys, args, message):
    code, err, _ = run_cli(tmp_path, capsys, *args)
    assert code == 2 and err.strip() == f"sacscale train: error: {message}", err


def _extras(node):
    """Every `extra` value (a JSON object's text) in a preset file's or a plan's tree."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "extra" and isinstance(value, str):
                yield value
            else:
                yield from _extras(value)
    elif isinstance(node, list):
        for value in node:
            yield from _extras(value)


def test_the_reference_the_presets_and_the_committed_sets_pass():
    check_learner_values(SACConfig().to_dict(), set())
    trees = [yaml.safe_load((REPO / "workflow" / "presets.yaml").read_text())]
    trees += [json.loads(p.read_text()) for p in sorted((REPO / "results").glob("*/plan.json"))]
    given = [json.loads(text) for tree in trees for text in _extras(tree)]
    assert given, "no extra found: the walk above misses them"
    for extra in given:
        check_learner_values(extra, set(extra))
        SACConfig(**extra)
