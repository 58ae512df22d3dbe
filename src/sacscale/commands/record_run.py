"""`sacscale record-run`: the pipeline's run rule wrapper (sacscale.pipeline.run_record):
one training command -> one complete run directory, or nothing marked done."""

from sacscale.pipeline.run_record import add_arguments, run

__all__ = ["add_arguments", "run"]
