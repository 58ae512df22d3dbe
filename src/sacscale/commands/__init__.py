"""One module per CLI command: `add_arguments(parser)` and `run(args) -> int`."""


class BadInput(Exception):
    """An input file or value that cannot be used; the message names it. `sacscale` prints it
    as one line and exits 2. Defined here, apart from the readers in `_inputs` (which load
    PyYAML), so that the CLI's start (`sacscale --help`) needs the project alone."""
