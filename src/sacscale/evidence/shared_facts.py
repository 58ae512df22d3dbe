"""Facts that environment.json states and other records state again, for verify's records
check (sacscale.evidence.records): the code's commit and dirty flag (run.json `code`), the
torch and Python versions (train_meta.json; correctness.json for torch; environment.json's
own `versions` and `torch`).

Each pair is written by the same pipeline from the same source (git, torch.__version__,
the interpreter, the kernel), so a disagreement is a record edited or copied from elsewhere."""

from __future__ import annotations

ABSENT = object()  # a field the record does not hold (an older set's, or a trainer's that writes none)


def opt(data, *keys):
    """data[k1][k2]... or ABSENT."""
    for key in keys:
        if not isinstance(data, dict) or key not in data:
            return ABSENT
        data = data[key]
    return data


def run_facts(env: dict, run: dict, meta: dict, reference: bool) -> dict[str, list[tuple[str, object]]]:
    """{quantity: [(source, value), ...]} that one run's records share with environment.json.
    The reference trainer runs in its own interpreter and records neither version."""
    facts = {
        "code commit": [("environment.json", opt(env, "project", "commit")), ("run.json", opt(run, "code", "commit"))],
        "code dirty": [("environment.json", opt(env, "project", "dirty")), ("run.json", opt(run, "code", "dirty"))],
    }
    if not reference:
        facts["torch version"] = [("environment.json", opt(env, "versions", "torch")),
                                  ("train_meta.json", opt(meta, "torch"))]
        facts["Python version"] = [("environment.json", opt(env, "python", "version")),
                                   ("train_meta.json", opt(meta, "python"))]
    return facts


def set_facts(env: dict, probe: dict | None) -> dict[str, list[tuple[str, object]]]:
    """{quantity: [(source, value), ...]} stated twice in environment.json or again in the
    correctness probe's record (absent record: not compared)."""
    torch = [("environment.json versions", opt(env, "versions", "torch")),
             ("environment.json torch", opt(env, "torch", "version"))]
    if probe is not None:
        torch.append(("correctness.json", opt(probe, "torch")))
    return {"torch version": torch}
