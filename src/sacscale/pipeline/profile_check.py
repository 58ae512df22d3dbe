"""The Snakemake profiles an invocation used, held to the rule of config files.

A profile's file (`config.yaml` or `profile.yaml`) sets Snakemake's options and, through its
`config:` entries, config values, all taken as the invoking user's own. Snakemake reads the
workflow profile (`profiles/default` next to the Snakefile unless `--workflow-profile` names
another or `none`) and every `--profile` (or `$SNAKEMAKE_PROFILE`) before the workflow can
look, and says no more than "Using profile ...". Each such file is refused, in one line
naming it, where another user owns it or may change it, or may rename entries in its folder
or one above it (sacscale.pipeline.config_check.refuse_others_file).
"""

from __future__ import annotations

import os
from pathlib import Path

from sacscale.pipeline.config_check import read_text, refuse_others_file

WHAT = "Snakemake profile"
TAKEN_AS = ("a profile's entries are taken as this user's own options and config values "
            "(--profile none and --workflow-profile none leave profiles out)")


def used_profile_files(argv: list[str], snakefile: str | os.PathLike | None) -> list[Path]:
    """The profile files Snakemake read for the command line `argv` (without the program's
    name; `$SNAKEMAKE_PROFILE` where it names no --profile), found as Snakemake finds them:
    its own parser and profile lookup. Empty where Snakemake is not importable here."""
    try:
        from snakemake.cli import get_argument_parser, get_profile_dir  # heavy, and only where Snakemake runs

        args, _ = get_argument_parser().parse_known_args(argv)
    except (ImportError, SystemExit):
        return []
    names = [] if args.profile in (None, ["none"]) else [str(p) for p in args.profile]
    workflow_profile = _workflow_profile(args.workflow_profile, snakefile)
    if workflow_profile is not None:
        names.append(str(workflow_profile))
    found = (get_profile_dir(name) for name in names)
    return list(dict.fromkeys(file for _, file in filter(None, found)))


def _workflow_profile(chosen: str | None, snakefile) -> Path | None:
    """The workflow profile Snakemake uses (snakemake.cli.parse_args): `chosen` if it is a
    file, else the first of `chosen` (or `default`), `profiles/<it>` and the Snakefile's own
    `profiles/<it>` that exists; None for `none`."""
    if chosen == "none":
        return None
    named = Path(chosen) if chosen else Path("default")
    if chosen and named.is_file():
        return named
    candidates = [named, Path("profiles") / named]
    if snakefile is not None:
        candidates.append(Path(snakefile).parent / "profiles" / named)
    return next((c for c in candidates if c.exists()), None)


def check_profiles(argv: list[str], snakefile: str | os.PathLike | None) -> None:
    """ConfigError naming the first profile file Snakemake used that another user could
    have written or swapped in (read_text first: another user's link to it is refused)."""
    for path in used_profile_files(argv, snakefile):
        read_text(path, WHAT)
        refuse_others_file(path, WHAT, TAKEN_AS)
