"""docs/config.md is generated from the schema and the presets (sacscale.pipeline.config_doc)
and documents every key."""

import yaml
from pipeline_helpers import REPO

from sacscale.pipeline import config_doc


def test_committed_doc_is_the_generated_one():
    committed = (REPO / "docs" / "config.md").read_text()
    assert committed == config_doc.render(REPO), (
        "docs/config.md is stale: python -m sacscale.pipeline.config_doc > docs/config.md")


def test_every_schema_key_and_preset_is_documented():
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    presets = yaml.safe_load((REPO / "workflow" / "presets.yaml").read_text())["presets"]
    doc = config_doc.render(REPO)
    for key, sub in schema["properties"].items():
        assert f"| `{key}` |" in doc, key
        for nested in sub.get("properties", {}):
            assert f"| `{key}.{nested}` |" in doc, nested
    for field in schema["$defs"]["run_fields"]["properties"]:
        assert f"| `run_configs.<name>.{field}` |" in doc, field
    for name in presets:
        assert f"`{name}`" in doc.split("## The presets' values")[1]
    assert "| `model_timeout_s` | number | `1800` |" in doc
    assert "--configfile" in doc  # nested overrides


def test_every_preset_key_is_a_config_key():
    """A preset's keys are the config's (a preset key the schema refused, as model_timeout_s
    was, could not be overridden)."""
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    presets = yaml.safe_load((REPO / "workflow" / "presets.yaml").read_text())["presets"]
    for name, preset in presets.items():
        assert set(preset) - {"description"} <= set(schema["properties"]), name
