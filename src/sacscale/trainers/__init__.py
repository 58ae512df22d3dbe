"""Trainers the pipeline can run besides our own (`sacscale train`)."""
