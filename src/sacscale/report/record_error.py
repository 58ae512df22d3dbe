"""The error of an input record the report cannot read, in a module of its own: the
commands that only read a set's records (manifest, verify's scope) name it without loading
the report's tables and plots (scipy, matplotlib, pandas)."""


class RecordError(ValueError):
    """An input record the report cannot read; the message names the file."""
