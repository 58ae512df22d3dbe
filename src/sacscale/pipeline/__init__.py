"""The reproduction pipeline's own modules, apart from the trainer: the run plan
(presets and config to runs), the run wrapper that records one training run as one
evidence directory, and the environment record. workflow/ wires them to rules."""
