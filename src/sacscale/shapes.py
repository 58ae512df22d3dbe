"""The shape of a record read from a file: which keys it holds and of which types, nested.
A record of another shape (a count as a string, a list where an object goes) must be named
with its file and field, not end in a KeyError or TypeError deep in a computation, nor go
into an output as written."""

from __future__ import annotations

NUMBER = (int, float)


class Maybe:
    """A shape whose value may also be null or left out (fields older sets never wrote)."""

    def __init__(self, shape) -> None:
        self.shape = shape


class Whole:
    """A shape of a whole number from `low` to `high` (a repeat of 10**40 is no repeat of a
    plan); `what` names it in the message."""

    def __init__(self, low: int, high: int, what: str) -> None:
        self.low, self.high, self.what = low, high, what


def _whole_problem(value, shape: Whole, where: str) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return f"{where!r} is {type(value).__name__}"
    if shape.low <= value <= shape.high:
        return None
    shown = str(value) if len(str(value)) <= 30 else f"a number of {len(str(value))} digits"
    return f"{where!r} is {shown}, not {shape.what} (from {shape.low} to {shape.high:,})"


def shape_problem(value, shape, where: str) -> str | None:
    """Why `value` is not of `shape`, or None. A shape is a type (or tuple of types; a bool
    is never a number), {key: shape} (an object with those keys), {str: shape} (an object
    whose every value is of the shape), [shape] (a list of them), Whole(low, high, what) or
    Maybe(shape)."""
    if isinstance(shape, Maybe):
        return None if value is None else shape_problem(value, shape.shape, where)
    if isinstance(shape, Whole):
        return _whole_problem(value, shape, where)
    if isinstance(shape, list):
        if not isinstance(value, list):
            return f"{where or 'value'!r} is {type(value).__name__}, not a list"
        return next((p for i, v in enumerate(value) if (p := shape_problem(v, shape[0], f"{where}[{i}]"))), None)
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            return f"{where or 'value'!r} is {type(value).__name__}, not an object"
        if str in shape:
            return next((p for k, v in value.items() if (p := shape_problem(v, shape[str], f"{where}[{k!a}]"))),
                        None)
        for key, sub in shape.items():
            if key not in value and not isinstance(sub, Maybe):
                return f"{f'{where}.{key}'.lstrip('.')!r} is missing"
            if key in value and (p := shape_problem(value[key], sub, f"{where}.{key}".lstrip("."))):
                return p
        return None
    if isinstance(value, bool) and bool not in (shape if isinstance(shape, tuple) else (shape,)):
        return f"{where!r} is bool"
    return None if isinstance(value, shape) else f"{where!r} is {type(value).__name__}"


def record_problem(value, shape: dict) -> str | None:
    """Why a record read from a file is not a JSON object of `shape`, in words that follow
    "not a record ... (" in the readers' messages; None when it is."""
    if not isinstance(value, dict):
        return f"a JSON {type(value).__name__}, not an object"
    problem = shape_problem(value, shape, "")
    return f"its {problem}" if problem else None
