"""How a run configuration is made of its layers: the preset's run_defaults, the config's
run_defaults, the preset's entry, the config's entry, each over the ones before it. A field
replaces the field below; `overrides` and `env` are merged key by key (the keys of one trainer
option are one key: - or _ alike, `no-x` with `x`), and `overrides.extra` (a JSON object in a
string) by its settings. A null value in `overrides` or `env` removes that key from the layers below."""

from __future__ import annotations

import argparse
import json

from sacscale.pipeline.overrides import extra_setting_problem
from sacscale.pipeline.plan_values import PlanError, config_key
from sacscale.train.options import json_setting, option_names

KEYED = ("overrides", "env")


def merged_fields(base: dict, top: dict) -> dict:
    """`top`'s fields over `base`'s. A null key of `overrides`/`env` is kept, so that it still
    removes the key from a layer merged under it later (`given_fields` drops it at the end); a
    null `overrides`/`env` itself gives nothing (the layer below stands)."""
    merged = {**base, **{k: v for k, v in top.items() if not (k in KEYED and v is None)}}
    for field in KEYED:
        if isinstance(base.get(field), dict) and isinstance(top.get(field), dict):
            merged[field] = _merged_keys(base[field], top[field], spelled_alike=field == "overrides")
    return merged


def given_fields(merged: dict) -> dict:
    """The merged configuration with the keys a layer removed (null) taken out of `overrides`
    and `env`."""
    for field in KEYED:
        if isinstance(merged.get(field), dict):
            merged[field] = {k: v for k, v in merged[field].items() if v is not None}
    return merged


def option_key(key) -> str:
    """One name for the keys of one trainer option: `min-free-mb` and `min_free_mb`, `obs_norm`
    and `no-obs-norm` (a later layer's `no-obs-norm: true` replaces `obs_norm: true`)."""
    return option_names().get(f"--{str(key).replace('_', '-')}", str(key).replace("-", "_"))


def _merged_keys(base: dict, top: dict, spelled_alike: bool) -> dict:
    same = option_key if spelled_alike else str
    replaced = {same(k) for k in top}
    merged = {k: v for k, v in base.items() if same(k) not in replaced}
    merged.update(top)
    if spelled_alike:
        _merge_extra(base, top, merged)
    return merged


def _merge_extra(base: dict, top: dict, merged: dict) -> None:
    """Both layers' `extra` JSON objects merged by setting, under `top`'s key; where either is
    not a JSON object, `top`'s stands as given (and is judged as given)."""
    below = _json_object(next((v for k, v in base.items() if option_key(k) == "extra"), None))
    key = next((k for k in top if option_key(k) == "extra"), None)
    above = _json_object(top.get(key)) if key is not None else None
    if below is not None and above is not None:
        merged[key] = json.dumps({**below, **above})


def _json_object(text) -> dict | None:
    if not isinstance(text, str):
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # judged as given later (sacscale.pipeline.overrides)
        return None
    return value if isinstance(value, dict) else None


def check_layer_extras(preset: dict, config: dict, name: str) -> None:
    """Each layer's `overrides.extra` judged where it is given, as the trainer reads it, before
    the layers are merged by its settings: a key given twice there, or an extra that is no JSON
    object, left the merged one without a word (the last value kept, or the layer dropped)."""
    layers = []
    for doc, origin in ((preset, name), (config, "config")):
        layers.append((doc.get("run_defaults"), "run_defaults", origin))
        layers += [(e, f"run_configs.{n}", origin) for n, e in (doc.get("run_configs") or {}).items()]
    for fields, key, origin in layers:
        overrides = fields.get("overrides") if isinstance(fields, dict) else None
        if not isinstance(overrides, dict):
            continue  # the schema names it
        for spelled in [k for k in overrides if option_key(k) == "extra"]:
            if problem := _extra_problem(overrides[spelled]):
                raise PlanError(f"{config_key(origin, f'{key}.overrides.{spelled}')}: {problem}")


def _extra_problem(text) -> str | None:
    try:
        settings = json_setting(str(text))
    except argparse.ArgumentTypeError as exc:
        return f"argument --extra: {exc}"
    if not isinstance(settings, dict):
        return f"--extra must be a JSON object, got {type(settings).__name__}"
    return next(filter(None, map(extra_setting_problem, settings)), None)
