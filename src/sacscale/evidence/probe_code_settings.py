"""What the code makes the correctness probe's record say, whatever plan it ran under
(sacscale.parallel.probe_settings): the tolerance table of its autocast dtype, the sync
tolerance and the note on both; each comparison's tolerance, and whether it is judged,
from that table (its verdict is read against the code's tolerance, not the record's,
sacscale.evidence.probe_record); the reference batch as the ranks' batches together; a
mutation among `sacscale probe --mutation`'s choices; and over two or more ranks, no
passing probe with a sync broken on purpose or without gradient sync (the probe fails
both, as its tests assert). The trainer path's constants, for which the command has no
option (its environments, batch, mode and criterion), are the trainer probe's settings
(sacscale.train.probe_settings).

Older records were made by the code's tables of their time, named here: records judged
elementwise (before the normwise criterion; their comparisons carry no `rel_diff`) by a
float32 param_rel of 2e-3 and a tolerance note of that time; those made before the sync
was judged carry no sync comparison and no sync_tolerance."""

from __future__ import annotations

from sacscale.evidence.result import same_value
from sacscale.parallel.probe_settings import MUTATIONS, SYNC_REL_TOL, TOLERANCE_REASON, TOLERANCES, reference_batch
from sacscale.train.probe_settings import CRITERION, TrainerProbeSettings, recorded_trainer_settings

# the float32 parameter tolerance the code had while parameters were judged elementwise
ELEMENTWISE_PARAM_REL = 2e-3
KINDS = {"param": "param_rel", "grad": "grad_rel"}


def _elementwise(record: dict) -> bool:
    """A record made before the normwise criterion: no comparison names the one it judges."""
    comparisons = record.get("comparisons")
    return isinstance(comparisons, list) and bool(comparisons) \
        and not any(isinstance(c, dict) and "rel_diff" in c for c in comparisons)


def made_before_sync_judged(record: dict) -> bool:
    """A learner record made before the sync was judged: elementwise, no sync tolerance and no
    sync comparison."""
    comparisons = record.get("comparisons") if isinstance(record.get("comparisons"), list) else []
    synced = any(isinstance(c, dict) and str(c.get("tensor")).startswith("sync/") for c in comparisons)
    return "sync_tolerance" not in record and not synced and _elementwise(record)


def code_table(record: dict) -> tuple[dict, str] | str:
    """(the code's tolerance table for the record's dtype, its name in messages), or why
    there is none."""
    dtype = record.get("autocast_dtype")
    if dtype not in TOLERANCES:
        return f"autocast_dtype {str(dtype)[:20]!r}: not one the probe runs ({', '.join(TOLERANCES)})"
    if _elementwise(record) and dtype == "float32":
        return ({**TOLERANCES[dtype], "param_rel": ELEMENTWISE_PARAM_REL},
                "float32 table of records judged elementwise")
    return TOLERANCES[dtype], f"{dtype} table"


def expected_tolerance(record: dict, tensor) -> tuple[object, str]:
    """(the code's tolerance for a comparison of `tensor` in this record, the table's name);
    ("?", why) where the code gives none: no known dtype, or no kind the probe compares."""
    kind = str(tensor).split("/", 1)[0]
    table = code_table(record)
    if kind == "sync":  # one tolerance in every dtype
        return SYNC_REL_TOL, table[1] if isinstance(table, tuple) else "table"
    if kind not in KINDS:
        return "?", "not a comparison of parameters, gradients or the sync"
    if isinstance(table, str):
        return "?", table
    return table[0][KINDS[kind]], table[1]


def _comparison_setting_problems(where: str, c: dict, record: dict, learner: bool) -> list[str]:
    if not learner and not str(c.get("tensor")).startswith("sync/"):
        return [f"{where}: not a comparison of the sync, the only one the trainer path makes"]
    expected, table = expected_tolerance(record, c.get("tensor"))
    if expected == "?":  # a dtype the probe does not run is named once, with the table
        return [f"{where}: {table}"] if table.startswith("not a comparison") else []
    tolerance = c.get("tolerance")
    judged = c.get("judged", tolerance is not None)
    if judged is not (expected is not None):
        return [f"{where}: judged {judged!r} with a tolerance of {tolerance!r}, the code's {table} gives "
                f"{expected!r} ({'not ' if expected is None else ''}judged)"]
    if not same_value(tolerance, expected):
        return [f"{where}: tolerance {tolerance!r}, the code's {table} gives {expected!r}"]
    return []


def _tolerance_problems(record: dict, learner: bool) -> list[str]:
    """The record's own tolerances against the code's (the learner record's table, note and
    sync tolerance; a trainer path's sync tolerance)."""
    comparisons = record.get("comparisons") if isinstance(record.get("comparisons"), list) else []
    problems = []
    table = code_table(record) if learner else None
    if isinstance(table, str):
        problems.append(table)
    elif table is not None and not same_value(record.get("tolerance"), table[0]):
        problems.append(f"tolerance {record.get('tolerance')!r}, the code's {table[1]} gives {table[0]!r}")
    if not (learner and made_before_sync_judged(record)) and not same_value(record.get("sync_tolerance"), SYNC_REL_TOL):
        name = table[1] if isinstance(table, tuple) else "table"
        problems.append(f"sync_tolerance {record.get('sync_tolerance')!r}, the code's {name} gives {SYNC_REL_TOL!r}")
    if learner and not _elementwise(record) and record.get("tolerance_reason") != TOLERANCE_REASON:
        problems.append(f"tolerance_reason {str(record.get('tolerance_reason'))[:40]!r}: not the code's "
                        "(sacscale.parallel.probe_settings.TOLERANCE_REASON)")
    return problems + [p for i, c in enumerate(comparisons) if isinstance(c, dict)
                       for p in _comparison_setting_problems(f"comparison {i + 1} ({str(c.get('tensor'))[:40]})",
                                                             c, record, learner)]


def _broken_sync_problems(record: dict) -> list[str]:
    """A mutation the command offers; over two or more ranks, no pass with the sync broken."""
    mutation = record.get("mutation")
    if mutation is not None and mutation not in MUTATIONS:
        return [f"mutation {str(mutation)[:30]!r}: not one of sacscale probe --mutation's choices "
                f"({', '.join(MUTATIONS)})"]
    ranks = record.get("world_size")
    if record.get("pass") is not True or not isinstance(ranks, int) or ranks < 2:
        return []
    problems = []
    if mutation is not None:
        problems.append(f"mutation {mutation!r} (a sync broken on purpose), but pass True: over {ranks} ranks "
                        "the probe fails it")
    if record.get("grad_sync") is False:
        problems.append(f"grad_sync False (the ranks ran without gradient sync), but pass True: over {ranks} "
                        "ranks the probe fails without it")
    return problems


def _batch_problems(record: dict) -> list[str]:
    batch, ranks, given = record.get("batch_per_rank"), record.get("world_size"), record.get("reference_batch")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (batch, ranks, given)):
        return []
    if not same_value(given, reference_batch(batch, ranks)):
        return [f"reference_batch {given}, but world_size {ranks} x batch_per_rank {batch} gives "
                f"{reference_batch(batch, ranks)}"]
    return []


# the trainer path's settings sacscale probe gives no option for: every record states the defaults
TRAINER_CONSTANTS = ("mode", "num_envs", "batch_per_rank")
TRAINER_SETTINGS = "sacscale.train.probe_settings.TrainerProbeSettings; sacscale probe has no option for it"


def _trainer_constant_problems(trainer: dict) -> list[str]:
    devices = trainer.get("devices") if isinstance(trainer.get("devices"), list) else []
    code = recorded_trainer_settings(TrainerProbeSettings(devices))
    problems = [f"{key} {repr(trainer[key])[:30]}, but the trainer probe's settings give {code[key]!r} "
                f"({TRAINER_SETTINGS})"
                for key in TRAINER_CONSTANTS if key in trainer and not same_value(trainer[key], code[key])]
    if "criterion" in trainer and trainer["criterion"] != CRITERION:
        problems.append(f"criterion {str(trainer['criterion'])[:40]!r}: not the code's "
                        "(sacscale.train.probe_settings.CRITERION)")
    return problems


def code_settings_problems(record) -> list[str]:
    """correctness.json's settings against what the code makes it say (an object; its
    trainer path read the same way, its problems prefixed `trainer_path: `)."""
    if not isinstance(record, dict):
        return []
    problems = _tolerance_problems(record, learner=True) + _broken_sync_problems(record) + _batch_problems(record)
    trainer = record.get("trainer_path")
    if isinstance(trainer, dict):
        problems += [f"trainer_path: {p}"
                     for p in _tolerance_problems(trainer, learner=False) + _broken_sync_problems(trainer)
                     + _trainer_constant_problems(trainer)]
    return problems
