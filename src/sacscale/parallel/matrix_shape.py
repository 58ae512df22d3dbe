"""The shape of a recorded matrix (config planner.matrix), checked before the pipeline uses it.

A recorded matrix is a file the user gives; its run configurations become the planned
preset's and its pairs are filtered by name, so a field of the wrong type (`cpu_pools: 7`,
`overrides: 5`, a pair `5`) failed deep inside planning with a Python TypeError. Each field
is held here to the type the config file's own run configurations have (its schema), and
a `TopologyError` names the key in the file ("planner: " is replaced by the file's name)."""

from __future__ import annotations

import json

from sacscale.parallel.topology import TopologyError

REDO = "correct the file or record it again (`sacscale plan-matrix --output FILE`)"


def check_matrix_shape(configs: dict, order: list, pairs) -> None:
    """TopologyError for the first field of the matrix's configs, order or pairs whose type
    is not what a run configuration, an order or a pair holds."""
    for cname, entry in configs.items():
        if not isinstance(entry, dict) or "devices" not in entry or "cpu_pools" not in entry:
            raise TopologyError(f"planner: matrix configuration {cname!r} lacks devices or cpu_pools")
        for field, check in FIELDS.items():
            if field in entry and (wanted := check(entry[field])):
                raise _wrong(f"configs.{cname}.{field}", entry[field], wanted)
    for index, name in enumerate(order):
        if not isinstance(name, str):
            raise _wrong(f"order[{index}]", name, "a run configuration's name")
    if pairs is not None and not isinstance(pairs, list):
        raise _wrong("pairs", pairs, "a list of pairs [baseline, compared]")
    for index, pair in enumerate(pairs or []):
        if not isinstance(pair, list) or len(pair) != 2 or not all(isinstance(n, str) for n in pair):
            raise _wrong(f"pairs[{index}]", pair, "a pair [baseline, compared] of run configuration names")


def _text(value) -> str | None:
    return None if isinstance(value, str) else "a string"


def _cpu_pools(value) -> str | None:
    wanted = "a CPU list per rank ([\"0-3\", \"4-7\"]) or the lists joined by ';'"
    if isinstance(value, str):
        return None
    if not isinstance(value, list) or not value or not all(isinstance(pool, str) for pool in value):
        return wanted
    return None


def _count(value) -> str | None:
    return None if isinstance(value, int) and not isinstance(value, bool) else "a whole number"


def _overrides(value) -> str | None:
    wanted = "a mapping of trainer options to strings, numbers or booleans"
    if not isinstance(value, dict) or not all(isinstance(v, (str, int, float, bool)) for v in value.values()):
        return wanted
    return None


# the fields preset_from_matrix copies into the run configurations, each with its check
FIELDS = {"devices": _text, "cpu_pools": _cpu_pools, "description": _text, "num_envs": _count,
          "overrides": _overrides}


def _wrong(key: str, value, wanted: str) -> TopologyError:
    return TopologyError(f"planner: {key}: {_shown(value)} is not {wanted}; {REDO}")


def _shown(value) -> str:
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= 60 else text[:57] + "..."
