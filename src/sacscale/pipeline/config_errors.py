"""The config's problems as the user reads them: each config file checked strictly before
the schema, and a schema error as one line naming the key."""

from __future__ import annotations

import os

from jsonschema.exceptions import ValidationError

from sacscale.pipeline.config_check import ConfigError, check_files, check_list_lengths, check_values
from sacscale.pipeline.plan_values import PlanError
from sacscale.pipeline.profile_check import check_profiles as _check_profiles


def check_config(paths, config: dict) -> None:
    """Before the schema: each config file parsed again, strictly (a duplicate key, many
    YAML aliases, a file too large or not UTF-8 are errors naming the file), then the
    merged config's values (sacscale.pipeline.config_check). PlanError names the file or key."""
    try:
        check_list_lengths(config)  # first, quickly: a file with a huge list is not parsed again
        check_files(paths)
        check_values(config)
    except ConfigError as exc:
        raise PlanError(str(exc)) from None


def check_profiles(argv: list[str], snakefile) -> None:
    """PlanError naming a Snakemake profile file used (the workflow profile, `--profile`,
    `$SNAKEMAKE_PROFILE`) that another user could have written or swapped in."""
    try:
        _check_profiles(argv, snakefile)
    except ConfigError as exc:
        raise PlanError(str(exc)) from None


def config_error_line(error) -> str:
    """One line for a config that fails the schema (a jsonschema ValidationError): where, what,
    and for an unknown key the keys allowed there, instead of the whole schema."""
    where = ".".join(str(p) for p in error.absolute_path) or "config"
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = sorted((error.schema.get("properties") or {}).keys())
        unknown = sorted(set(error.instance) - set(allowed))
        what = f"{', '.join(map(repr, unknown))} was unexpected: " + (
            "not a config key" if where == "config" else f"not a key of {where}")
        return f"{what} (allowed: {', '.join(allowed)})" if allowed else what
    message = error.message if len(error.message) <= 200 else error.message[:197] + "..."
    return f"{where}: {message}{_boolean_hint(error)}"


# words a reader may take for a boolean: YAML 1.1 reads them unquoted, `--config` does not
_BOOLEAN_WORDS = {"true", "false", "yes", "no", "on", "off"}


def _boolean_hint(error) -> str:
    """For a boolean key given as the word true/false (`--config host_checks=false`, which
    Snakemake reads as Python literals, so as text): how to write it. Text is not taken as
    a boolean: `--config` keeps every other word as text too."""
    types = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
    if error.validator != "type" or "boolean" not in types or not isinstance(error.instance, str):
        return ""
    given = error.instance.strip().lower()
    if given not in _BOOLEAN_WORDS:
        return ""
    word = "True" if given in {"true", "yes", "on"} else "False"
    path = list(error.absolute_path)
    if len(path) > 1:  # Snakemake reads the values inside a --config mapping as text, False too
        return (f" (inside a mapping, --config gives Snakemake text only: put it in a --configfile, "
                f"{word.lower()} unquoted: {_nested_yaml(path, word.lower())})")
    return (f" (--config reads Python values: write {word} there, capitalised; in a --configfile, "
            f"{word.lower()} unquoted)")


def _nested_yaml(path: list, value: str) -> str:
    """`evaluation: {enabled: false}` for the path evaluation.enabled (a list item as [..., it])."""
    text = value
    for part in reversed(path[1:]):
        text = (f"[{'..., ' * min(part, 1)}{text}]") if isinstance(part, int) else f"{{{part}: {text}}}"
    return f"{path[0]}: {text}"


def config_error_message(workflow_error) -> str:
    """Snakemake's "Error validating config file." with the ValidationError it wraps, as
    one line; any other error as it is."""
    cause = workflow_error.__cause__ or workflow_error.__context__  # Snakemake keeps only its text in args
    if not isinstance(cause, ValidationError):
        return str(workflow_error)
    return f"Error validating config file: {config_error_line(cause)}"


def check_state_folder(workdir) -> None:
    """PlanError when Snakemake cannot keep its state (`.snakemake/`: locks, metadata) in
    `workdir`: in a read-only checkout it ended in its own traceback (`OSError: [Errno 30]`),
    even for `-n` or `verify`, after reading the whole workflow."""
    state = os.path.join(workdir, ".snakemake")
    where = state if os.path.isdir(state) else workdir
    if not os.access(where, os.W_OK | os.X_OK):
        raise PlanError(f"{where}: not writable (a read-only checkout?); Snakemake keeps its state in "
                        f"{state}; run from a writable copy, or verify a set without Snakemake: "
                        "sacscale verify results/<set>")
