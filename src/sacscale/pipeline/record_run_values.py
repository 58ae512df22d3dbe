"""record-run's option values that are more than a word: the run's environment (`--env
KEY=VALUE`, each key once) and the resolved configuration (`--resolved-json`), read as a
record is."""

from __future__ import annotations

from sacscale.reading import NestedTooDeep, RecordJSONError, loads_record


def resolved_json(text: str) -> tuple[dict, str | None]:
    """--resolved-json read as records are (a key given twice, NaN, an infinite number or a
    lone surrogate went into run.json), or the problem with it."""
    try:
        resolved = loads_record(text, finite=True)
    except NestedTooDeep:
        return {}, "--resolved-json: JSON nested too deep"
    except RecordJSONError as exc:
        return {}, f"--resolved-json: {exc.msg}"
    except ValueError as exc:
        return {}, f"--resolved-json: not JSON ({exc})"
    if not isinstance(resolved, dict):
        return {}, "--resolved-json: not a JSON object"
    return resolved, None


def env_pairs(items: list[str]) -> tuple[dict[str, str], str | None]:
    """--env KEY=VALUE items as a mapping, or the problem of the first that is not one."""
    env: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            return env, f"--env {item!r}: expected KEY=VALUE"
        if key in env:  # the later value replaced the earlier one without a word
            return env, f"--env {item!r}: {key} is given twice"
        env[key] = value
    return env, None
