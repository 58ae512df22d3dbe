"""The learner benchmark's modes, each (compiled, graphed): in a module of their own so that
`sacscale learner-bench` lists and checks them before loading torch."""

MODES = {"eager": (False, False), "compile": (True, False), "graph": (False, True), "compile+graph": (True, True)}
