"""A flag given to a resume is judged against the run even where it equals the parser's
default: `--no-obs-norm` for a run trained with --obs-norm was dropped without a word."""

import argparse
from dataclasses import asdict, fields

import pytest

from sacscale.train.config import TrainConfig, TrainingError
from sacscale.train.options import GIVEN, add_arguments
from sacscale.train.resume import _merged_options

RUN = asdict(TrainConfig(obs_norm=True, devices="cpu,cpu", iterations=40))


def merged(*argv):
    parser = argparse.ArgumentParser()
    add_arguments(parser, note_given=True)
    args = parser.parse_args(["--resume", "run", *argv])
    cfg = TrainConfig(**{f.name: getattr(args, f.name) for f in fields(TrainConfig)})
    return _merged_options(cfg, RUN, TrainConfig(), getattr(args, GIVEN))


@pytest.mark.parametrize("argv, says", [
    (["--no-obs-norm"], "--resume: --no-obs-norm differs from the resumed run's --obs-norm"),
    (["--devices", "cpu"], "--resume: --devices cpu differs from the resumed run's cpu,cpu")])
def test_a_flag_at_its_default_that_differs_from_the_run_is_refused(argv, says):
    with pytest.raises(TrainingError) as err:
        merged("--iterations", "80", *argv)
    assert str(err.value).startswith(says), err.value


def test_flags_left_out_or_equal_to_the_runs_keep_the_runs():
    out = merged("--iterations", "80", "--obs-norm", "--devices", "cpu,cpu")
    assert (out["obs_norm"], out["devices"], out["iterations"]) == (True, "cpu,cpu", 80)
    assert merged("--iterations", "80")["obs_norm"] is True
