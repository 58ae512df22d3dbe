"""plan.json's `description` (shown on the page as "The preset: ...") is the named preset's
in workflow/presets.yaml, as the planner copies it (sacscale.pipeline.planning), and
environment.json's `plan` is plan.json itself (verify-env stores the plan it checked).

Presets are reworded between sets, so the description is compared with presets.yaml as
the set's recorded commit holds it (environment.json project.commit, read from this
code's git history by sacscale.evidence.code_history), with the set's stored diff
applied where its tree was dirty and the diff changes presets.yaml. Where that commit
cannot be read (no git, or a checkout without it), the checkout's own presets.yaml is the
reference, and a note says so (a set planned with other words would pass or fail on
today's); in a shallow clone, whose history stops short of most
commits, it is not compared."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import yaml

from sacscale.evidence import code_history
from sacscale.evidence.code_history import CODE_ROOT
from sacscale.evidence.shared_facts import opt
from sacscale.evidence.result import same_value
from sacscale.pipeline.planning import preset_description
from sacscale.scratch import scratch_folder

PRESETS = "workflow/presets.yaml"


def _with_diff(text: str, diff: Path) -> str | None:
    """presets.yaml after the stored diff's changes to it (git apply, in a scratch folder)."""
    try:
        with scratch_folder("sacscale-presets-") as folder:
            (folder / "workflow").mkdir()
            (folder / PRESETS).write_text(text, encoding="utf-8")
            if code_history.git_output(["apply", f"--include={PRESETS}", str(diff.resolve())], folder) is None:
                return None
            return (folder / PRESETS).read_text(encoding="utf-8")
    except OSError:
        return None


def _diff_changes_presets(root: Path, env: dict) -> Path | None:
    """The set's stored diff, where the recorded tree was dirty and the diff changes presets.yaml."""
    name = opt(env, "project", "diff", "file")
    if opt(env, "project", "dirty") is not True or not isinstance(name, str) or "/" in name:
        return None
    path = root / name
    try:
        return path if path.is_file() and f"b/{PRESETS}".encode() in path.read_bytes() else None
    except OSError:
        return None


def reference_presets(root: Path, env: dict, code_root: Path = CODE_ROOT) -> tuple[str | None, str]:
    """(presets.yaml's text the set was planned with, where it was read), or (None, why not)."""
    commit = opt(env, "project", "commit")
    text = None
    if code_history.is_commit_id(commit):
        text = code_history.git_output(["show", f"{commit}:{PRESETS}"], code_root)
    if text is not None:
        where = f"{PRESETS} at the set's commit {commit[:12]}"
        diff = _diff_changes_presets(root, env)
        if diff is None:
            return text, where
        changed = _with_diff(text, diff)
        return (changed, f"{where} with its stored diff {diff.name}") if changed is not None else \
            (text, f"{where} (its stored diff {diff.name} changes it, but does not apply)")
    if isinstance(commit, str) and code_history.is_shallow(code_root):
        return None, (f"the set's commit {commit[:12]} is not in this shallow clone's history "
                      "(fetch it with --unshallow)")
    current = code_root / PRESETS
    if not current.is_file():
        return None, f"no {PRESETS} beside this code ({code_root})"
    why = (f"the set's commit {commit[:12]} cannot be read from its git history" if isinstance(commit, str)
           else "environment.json records no commit")
    return current.read_text(encoding="utf-8"), f"{FALLBACK}{PRESETS} ({why})"


@lru_cache(maxsize=4)
def _parsed(text: str):
    """presets.yaml parsed, kept by its text: each set verified reads the same few versions
    (read only here, never changed)."""
    return yaml.safe_load(text)


FALLBACK = "this checkout's "  # how reference_presets names the checkout's own presets.yaml


def preset_findings(root: Path, plan: dict, env: dict,
                    code_root: Path = CODE_ROOT) -> tuple[list[str], list[str], list[str]]:
    """(problems, what was not compared, notes): a note where the reference is not the
    set's own commit's presets.yaml but this checkout's."""
    problems = []
    if isinstance(env.get("plan"), dict) and not same_value(env["plan"], plan):
        keys = sorted(k for k in set(env["plan"]) | set(plan) if not same_value(env["plan"].get(k), plan.get(k)))
        problems.append(f"set: environment.json plan is not plan.json (they differ in {', '.join(keys[:6])}): "
                        "verify-env stores the plan it checked")
    name, description = plan.get("preset"), plan.get("description")
    if not isinstance(name, str) or not isinstance(description, str):
        return problems, [], []
    text, where = reference_presets(root, env, code_root)
    if text is None:
        return problems, [f"plan.json description: not compared with the preset's: {where}"], []
    notes = [f"plan.json description: compared with {where}, not with presets.yaml as the set's commit holds it"] \
        if where.startswith(FALLBACK) else []
    try:
        presets = (_parsed(text) or {}).get("presets") or {}
    except (yaml.YAMLError, AttributeError):
        return problems, [f"plan.json description: not compared with the preset's: {where} does not parse"], notes
    if not isinstance(presets.get(name), dict):
        return problems + [f"plan.json: preset {name[:40]!r} is not a preset of {where}"], [], notes
    expected = preset_description(presets[name])
    if description != expected:
        problems.append(f"plan.json: description {_cut(description)!r} is not preset {name}'s description in "
                        f"{where}: {_cut(expected)!r}")
    return problems, [], notes


def _cut(text: str) -> str:
    return text if len(text) <= 80 else text[:77] + "..."
