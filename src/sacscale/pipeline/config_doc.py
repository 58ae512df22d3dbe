"""docs/config.md, generated from the config schema and the presets: every config key with
its type, default and description, and the value each named preset gives it.

    python -m sacscale.pipeline.config_doc > docs/config.md

(tests/workflow/test_config_doc.py checks that the committed file is this output.)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

SCHEMA = Path("workflow/schemas/config.schema.yaml")
PRESETS = Path("workflow/presets.yaml")
# the default of a key no preset gives a value (sacscale.pipeline.runplan.resolve)
BUILT_IN = {"model_timeout_s": 1800, "schedule": "counterbalanced", "run_set": "the preset's name",
            "keep_policies": "best"}

HEADER = """# Config keys

Generated from `workflow/schemas/config.schema.yaml` and `workflow/presets.yaml` by
`python -m sacscale.pipeline.config_doc > docs/config.md`; do not edit by hand.

Set keys in `config.yaml`, in a file given with `--configfile FILE` (merged over
`config.yaml`), or on the command line with `--config KEY=VALUE ...`. A key left out or
null takes the chosen preset's value (second table), else the default in the first.

**Nested keys** (`probe`, `model`, `evaluation`, `run_configs`, ...) go in a file given
with `--configfile`: Snakemake's `--config` takes only top-level names (`probe.iterations=3`
is refused, "Config entry must start with a valid identifier"), and a nested value written
inline, `--config 'probe={iterations: 3}'`, reaches the workflow with its numbers as strings,
which the schema refuses (`'3' is not of type 'integer'`). For example:

```bash
printf 'probe:\\n  iterations: 3\\nrun_configs:\\n  n1_cpu:\\n    num_envs: 32\\n' > override.yaml
snakemake --cores all --configfile override.yaml
```

A `--configfile` merges into `config.yaml` key by key (a nested mapping is merged, not
replaced), as `--config` does for top-level keys.
"""


def _type(schema: dict, defs: dict) -> str:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return {"run_fields": "run configuration"}.get(name, _type(defs[name], defs))
    if "oneOf" in schema:
        return " or ".join(_type(s, defs) for s in schema["oneOf"])
    kind = schema.get("type", "any")
    kinds = [k for k in (kind if isinstance(kind, list) else [kind]) if k != "null"]
    if "enum" in schema:
        return " or ".join(f"`{v}`" for v in schema["enum"] if v is not None)
    return " or ".join(kinds)


def _value(value) -> str:
    if value is None:
        return ""
    return f"`{json.dumps(value) if not isinstance(value, str) else value}`"


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def key_rows(schema: dict) -> list[tuple[str, str, str, str]]:
    """(key, type, default, description) of every key, nested keys as `a.b`; the fields of a
    run configuration once, under `run_configs.<name>` (run_defaults takes the same)."""
    defs = schema.get("$defs", {})
    rows = []

    def walk(prefix: str, props: dict) -> None:
        for key, sub in props.items():
            path = f"{prefix}{key}"
            default = sub.get("default", BUILT_IN.get(path))
            described = sub.get("description") or defs.get(sub.get("$ref", "").rsplit("/", 1)[-1], {}).get(
                "description", "")
            rows.append((path, _type(sub, defs), "" if default in (None, {}) else _value(default), described))
            if path == "run_configs":
                walk("run_configs.<name>.", defs["run_fields"]["properties"])
            elif "properties" in sub:
                walk(f"{path}.", sub["properties"])

    walk("", schema["properties"])
    return rows


def preset_rows(presets_doc: dict) -> tuple[list[str], list[list[str]]]:
    """The named presets' values of the scalar keys, probe and run_defaults."""
    presets = presets_doc["presets"]
    names = list(presets)
    keys = ["prefix", "repeats", "iterations", "seed", "order", "schedule", "model_timeout_s", "keep_policies"]
    keys += [f"probe.{k}" for k in ("devices", "iterations", "compile_loss", "timeout_s", "trainer_iterations")]
    run_keys = sorted({k for p in presets.values() for k in (p.get("run_defaults") or {})})
    keys += [f"run_defaults.{k}" for k in run_keys]
    rows = []
    for key in keys:
        row = [f"`{key}`"]
        for name in names:
            head, _, tail = key.partition(".")
            value = (presets[name].get(head) or {}).get(tail) if tail else presets[name].get(head)
            row.append(_value(value if value is not None else BUILT_IN.get(key)) or "-")
        rows.append(row)
    rows.append(["`run_configs`"] + [", ".join(f"`{c}`" for c in presets[n].get("run_configs") or {}) or
                                     "planned" for n in names])
    return names, rows


def render(root: Path = Path(".")) -> str:
    schema = yaml.safe_load((root / SCHEMA).read_text(encoding="utf-8"))
    presets_doc = yaml.safe_load((root / PRESETS).read_text(encoding="utf-8"))
    out = [HEADER, "## Keys\n", "| key | type | default | description |", "|---|---|---|---|"]
    for key, kind, default, description in key_rows(schema):
        out.append(f"| `{key}` | {_cell(kind)} | {_cell(default)} | {_cell(description)} |")
    names, rows = preset_rows(presets_doc)
    out += ["", "## The presets' values\n",
            "`preset: auto` picks one of these (`config.yaml`, `workflow/presets.yaml`); `-`: not set by the preset.\n",
            "| key | " + " | ".join(f"`{n}`" for n in names) + " |", "|---" * (len(names) + 1) + "|"]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(out) + "\n"


def main() -> int:
    sys.stdout.write(render())
    return 0


if __name__ == "__main__":
    sys.exit(main())
