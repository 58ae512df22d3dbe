"""Facts that environment.json states and other records state again, for verify's records
check (sacscale.evidence.records): the code's commit and dirty flag (run.json `code`), the
torch and Python versions (train_meta.json; correctness.json for torch; environment.json's
own `versions` and `torch`), and the CPUs (environment.json `cpu`: its available CPUs and
counts against its own lscpu layout; each run's pinned CPUs, in train_meta.json, against
that layout and its available CPUs; each CPU list one that parses), the GPUs (torch's
against nvidia-smi's; every CUDA device the probe and the runs used, in plan.json, their
commands and train_meta.json, against torch's list) and the interpreter (run.json `python`).
The stored diff is sacscale.evidence.stored_diff's.

Each pair is written by the same pipeline from the same source (git, torch.__version__,
the interpreter, the kernel), so a disagreement is a record edited or copied from elsewhere.
The nvidia-smi topology's CPU affinity is not compared with the runs' pools: it names the
CPUs near each GPU, not the CPUs a run may use."""

from __future__ import annotations

import re
from collections import Counter

from sacscale.cpus import parse_cpu_list
from sacscale.evidence.result import same_value

ABSENT = object()  # a field the record does not hold (an older set's, or a trainer's that writes none)


def opt(data, *keys):
    """data[k1][k2]... or ABSENT."""
    for key in keys:
        if not isinstance(data, dict) or key not in data:
            return ABSENT
        data = data[key]
    return data


def in_checkout(env: dict) -> bool:
    """The code was imported from a git checkout (project.repository true): only then does the
    pipeline record its commit and dirty flag (an installed copy, a source archive: neither)."""
    return opt(env, "project", "repository") is True


def _code_state(env: dict, key: str):
    """project's commit or dirty flag; null where the code is outside any checkout and the
    pipeline records neither (run.json then says null)."""
    value = opt(env, "project", key)
    if value is ABSENT and opt(env, "project", "repository") in (False, None):
        return None
    return value


def run_facts(env: dict, run: dict, meta: dict, reference: bool) -> dict[str, list[tuple[str, object]]]:
    """{quantity: [(source, value), ...]} that one run's records share with environment.json.
    The reference trainer runs in its own interpreter and records neither version."""
    facts = {
        "code commit": [("environment.json", _code_state(env, "commit")), ("run.json", opt(run, "code", "commit"))],
        "code dirty": [("environment.json", _code_state(env, "dirty")), ("run.json", opt(run, "code", "dirty"))],
        # both rules run `sacscale` of the same environment (envs/sacscale.yaml): the interpreter
        # verify-env described is the one that ran the run's wrapper
        "Python interpreter": [("environment.json", opt(env, "python", "executable")),
                               ("run.json", opt(run, "python"))],
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


def _layout_cpus(layout) -> set[int] | None:
    """The CPU ids of `lscpu -e=CPU,...` output (offline CPUs included), or None."""
    if not isinstance(layout, str):
        return None
    ids = {int(line.split()[0]) for line in layout.splitlines() if line.split() and line.split()[0].isdigit()}
    return ids or None


def _cpu_list(value, where: str) -> tuple[set[int] | None, str | None]:
    """(the CPUs a recorded CPU list names, or None; why it is none: `where` is not one)."""
    if value is ABSENT:
        return None, f"{where}: absent"
    try:
        if isinstance(value, (str, list)):
            return set(parse_cpu_list(value)), None
        reason = f"a {type(value).__name__}"
    except (TypeError, ValueError) as exc:
        reason = str(exc)
    return None, f"{where}: {_shown(value)} is not a CPU list ({reason})"


def _shown(value) -> str:
    return repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."


def _unknown_each(problems: list[str], strict: bool) -> tuple[list[str], list[str]]:
    """CPU lists that cannot be read: in a set made by this code (`strict`), which writes
    each one, problems; in an older set, notes. Never a silent skip: the checks they feed
    (every pinned CPU is available, the page's count) would be off without a word."""
    return (problems, []) if strict else ([], [f"{line} (an older set: not checked)" for line in problems])


def cpu_findings(env: dict, strict: bool) -> tuple[list[str], list[str]]:
    """(problems, notes): environment.json's CPUs against its own lscpu layout: the CPUs
    available to the process exist there, are as many as cpu.available_count says (the
    page shows both), and no more than the online CPUs, which are no more than the layout
    lists. No lscpu (a machine without it records none): only the count and the online
    CPUs are compared."""
    cpu = opt(env, "cpu")
    if cpu is ABSENT:
        return [], []  # an environment record without its CPUs: nothing the page shows of them
    available, problem = _cpu_list(opt(cpu, "available"), "environment.json: cpu.available")
    if problem:
        return _unknown_each([f"{problem}: the CPUs the runs could use, which their pinned CPUs and "
                              "cpu.available_count are checked against, are not known"], strict)
    layout = _layout_cpus(opt(cpu, "layout"))
    problems = []
    outside = available - layout if layout is not None else set()
    if outside:
        problems.append(f"set: CPUs: environment.json cpu.available {str(cpu['available'])[:40]!r} names CPUs its "
                        f"cpu.layout (lscpu) does not list ({len(outside)} of them, e.g. {min(outside)})")
    count, logical = opt(cpu, "available_count"), opt(cpu, "logical_cpus")
    if (count is not ABSENT or strict) and not same_value(count, len(available)):
        problems.append(f"set: CPUs: environment.json cpu.available_count says "
                        f"{'nothing' if count is ABSENT else repr(count)}, cpu.available lists {len(available)}")
    most = len(layout) if layout is not None else None
    if isinstance(logical, int) and not len(available) <= logical <= (most if most is not None else logical):
        problems.append(f"set: CPUs: environment.json cpu.logical_cpus says {logical!r}, its cpu.layout (lscpu) "
                        f"lists {most} and {len(available)} are available")
    return problems, []


def _gpu_names(env: dict, *keys) -> list[str]:
    gpus = opt(env, *keys)
    return [g["name"] for g in gpus if isinstance(g, dict) and isinstance(g.get("name"), str)] \
        if isinstance(gpus, list) else []


# how CUDA (torch.cuda.get_device_properties(i).name) names a MIG instance: its GPU's name,
# " MIG " and the instance's profile, as NVIDIA's MIG guide names profiles: an optional
# compute-instance share (`1c.`), the GPU-instance share and its memory (`3g.40gb`), an
# optional media-extension suffix; e.g. "NVIDIA H100 80GB HBM3 MIG 1g.10gb"
MIG_INSTANCE = re.compile(r"(?P<gpu>.+) MIG (?:[1-7]c\.)?[1-7]g\.[0-9]{1,3}gb(?:\+me(?:\.all)?|-me|\+gfx)?")


def _gpu_of(torch_name: str) -> str:
    """The GPU a name torch reads is, or is a MIG instance of; a name holding " MIG " in any
    other form is left whole, so that it is one nvidia-smi does not list."""
    mig = MIG_INSTANCE.fullmatch(torch_name)
    return mig["gpu"] if mig else torch_name


def gpu_problems(env: dict) -> list[str]:
    """environment.json reads the machine's GPUs twice: torch (those CUDA_VISIBLE_DEVICES
    leaves it, in its own order) and nvidia-smi (all of them). Each GPU torch names is one
    nvidia-smi names, or a MIG instance of one, named as CUDA names it (MIG_INSTANCE); torch's
    count is the number of GPUs it names."""
    torch_names = Counter(_gpu_of(name) for name in _gpu_names(env, "torch", "gpus"))
    smi_names = Counter(_gpu_names(env, "nvidia", "gpus"))
    if not torch_names or not smi_names:
        return _count_problem(env)
    unlisted = torch_names - smi_names
    if not unlisted:
        return _count_problem(env)
    listed = ", ".join(f"{n} x {name}" for name, n in sorted(smi_names.items()))
    mig = " (a MIG instance is named '<GPU> MIG <profile>', e.g. '<GPU> MIG 1g.10gb')" \
        if any(" MIG " in name for name in unlisted) else ""
    return [f"set: GPUs: environment.json torch.gpus names {', '.join(sorted(unlisted))!r} beyond what "
            f"nvidia.gpus lists on the same machine (nvidia-smi: {listed}){mig}", *_count_problem(env)]


def _count_problem(env: dict) -> list[str]:
    """torch.cuda_devices and torch.gpus are one count (sacscale.pipeline.environment)."""
    count, gpus = opt(env, "torch", "cuda_devices"), opt(env, "torch", "gpus")
    if isinstance(gpus, list) and count is not ABSENT and not same_value(count, len(gpus)):
        return [f"set: GPUs: environment.json torch.cuda_devices says {_shown(count)}, torch.gpus lists {len(gpus)}"]
    return []


def cuda_indices(devices) -> list[int]:
    """The CUDA device indices a devices value names: '0,0' (the plan's, a command's) or
    ['cuda:0', 'cuda:0'] (train_meta.json's); 'cpu' ranks name none. An entry of another
    form is named where the sources are compared (records, train_meta_record)."""
    entries = devices.split(",") if isinstance(devices, str) else devices if isinstance(devices, list) else []
    texts = [str(e).strip().removeprefix("cuda:") for e in entries]
    return [int(t) for t in texts if t.isascii() and t.isdigit()]


def _machine_gpus(env: dict) -> int | None:
    """How many GPUs the machine has: nvidia-smi lists them all whatever CUDA_VISIBLE_DEVICES
    says; without its list, torch's, if the pipeline set no CUDA_VISIBLE_DEVICES; else unknown."""
    smi = opt(env, "nvidia", "gpus")
    if isinstance(smi, list) and smi:
        return len(smi)
    torch = opt(env, "torch", "gpus")
    pipeline_visible = opt(env, "env", "CUDA_VISIBLE_DEVICES")
    return len(torch) if isinstance(torch, list) and pipeline_visible is ABSENT else None


def _beyond_own_visible(user: str, used: dict[int, str], visible: str, env: dict) -> list[str]:
    """A run under its own CUDA_VISIBLE_DEVICES (the run configuration's; it replaces the
    pipeline's): its index i is the i-th entry of that list, which must have one; an entry
    that is an index numbers the machine's GPUs. A GPU-/MIG- UUID entry is not counted:
    environment.json records no UUIDs to find it among."""
    entries = [e.strip() for e in str(visible).split(",")] if str(visible).strip() else []  # '': none visible
    machine = _machine_gpus(env)
    for index, source in sorted(used.items()):
        if index >= len(entries):
            return [f"{user}: GPUs: CUDA device {index} ({source}), but its CUDA_VISIBLE_DEVICES {_shown(visible)} "
                    f"makes {len(entries)} visible"]
        entry = entries[index]
        if machine is not None and entry.isascii() and entry.isdigit() and int(entry) >= machine:
            return [f"{user}: GPUs: CUDA device {index} ({source}) is GPU {entry} of its CUDA_VISIBLE_DEVICES "
                    f"{_shown(visible)}, but environment.json lists {machine} GPU(s) on the machine"]
    return []


def gpu_use_problems(user: str, uses: list[tuple[str, object]], env: dict, visible=None) -> list[str]:
    """Every CUDA device `user` (a run, or the correctness probe) used, as its records state
    them (`uses`: [(source, devices)]), is one environment.json lists: an index below the
    number of GPUs torch saw in the pipeline's process (the run inherits that process's
    environment, CUDA_VISIBLE_DEVICES included, so its indices are torch's). A run whose
    configuration sets its own CUDA_VISIBLE_DEVICES (`visible`) is judged against that list
    instead (_beyond_own_visible). Runs on CPU use none, and need no GPU."""
    used: dict[int, str] = {}
    for source, devices in uses:
        for index in cuda_indices(devices):
            used.setdefault(index, f"{source} {_shown(devices)}")
    if not used:
        return []
    if visible is not None:
        return _beyond_own_visible(user, used, visible, env)
    gpus = opt(env, "torch", "gpus")
    if not isinstance(gpus, list):
        return [f"{user}: GPUs: CUDA devices used ({next(iter(used.values()))}), but environment.json torch.gpus is "
                f"{'absent' if gpus is ABSENT else _shown(gpus)}, not the list of GPUs torch saw"]
    index = max(used)
    if index < len(gpus):
        return []
    listed = f"lists {len(gpus)} GPU(s)" if gpus else "lists no GPU"
    return [f"{user}: GPUs: CUDA device {index} ({used[index]}), but environment.json torch.gpus {listed} "
            "(those torch saw in the pipeline's process, whose environment the runs and the probe inherit)"]


# train_meta.json collector_pools' pinned CPU lists: one per rank (None: that rank not pinned)
PER_RANK_LISTS = ("pools", "learner_affinity")


def _named_cpus(pools: dict) -> tuple[set[int], list[str]]:
    """(the CPUs collector_pools pins, a line for each of its lists that is not a CPU list);
    a field it lacks is named by sacscale.evidence.required_fields."""
    cpus, bad = set(), []
    lists = [(f"collector_pools.{key}[{rank}]", value) for key in PER_RANK_LISTS
             if isinstance(pools.get(key), list) for rank, value in enumerate(pools[key]) if value is not None]
    bad += [f"collector_pools.{key}: {_shown(pools[key])} is not a list (one CPU list per rank)"
            for key in PER_RANK_LISTS if key in pools and not isinstance(pools[key], list)]
    for where, value in lists:
        named, problem = _cpu_list(value, where)
        cpus |= named or set()
        bad += [problem] if problem else []
    return cpus, bad


def pool_findings(run_name: str, env: dict, meta: dict, strict: bool) -> tuple[list[str], list[str]]:
    """(problems, notes): the CPUs a run pinned for its collectors and learners (train_meta.json
    collector_pools, tied to the run's command by sacscale.evidence.pool_record) exist in the
    layout environment.json recorded on the run's host (the host is compared elsewhere) and
    are among the CPUs the pipeline's process could use there (cpu.available): a run cannot
    pin a CPU its process may not use. A list that is not one is named (cpu_findings names
    cpu.available), never passed over."""
    pools = opt(meta, "collector_pools")
    if not isinstance(pools, dict):
        return [], []
    pinned, bad = _named_cpus(pools)
    problems, notes = _unknown_each([f"{run_name}: train_meta.json {line}" for line in bad], strict)
    layout = _layout_cpus(opt(env, "cpu", "layout"))
    outside = sorted(pinned - layout) if layout is not None else []
    if outside:
        problems.append(f"{run_name}: CPU pools: train_meta.json pins CPU(s) {', '.join(map(str, outside[:8]))}, "
                        f"which environment.json's cpu.layout (lscpu, {len(layout)} CPUs) does not list")
    available, _ = _cpu_list(opt(env, "cpu", "available"), "cpu.available")
    unavailable = sorted(pinned - available - set(outside)) if available is not None else []
    if unavailable:
        problems.append(f"{run_name}: CPU pools: train_meta.json pins CPU(s) {', '.join(map(str, unavailable[:8]))}, "
                        f"which environment.json's cpu.available ({str(env['cpu']['available'])[:40]!r}, "
                        f"{len(available)} CPUs) does not hold: the CPUs the pipeline's process could use there")
    return problems, notes


def _checkout_problems(project: dict, workdir: dict) -> list[str]:
    """The pipeline runs from the checkout it imports its code from (the workflow is that
    checkout's; sacscale.pipeline.environment project_state), so `project` and `workdir.git`
    name one checkout at one commit. A path or commit that differs is an edit: the dirty
    flags are compared only within one checkout, so an edited path would switch that off.
    The exception: `project.repository` false, code imported from an installed copy outside
    any checkout (an older set's record, or a copy that differs from the checkout,
    `installed_copy_of`); its path is the copy's and it has no commit (named where a set
    made by this code lacks one). A pair of records not both in a checkout is judged by
    checkout_pair_findings, which names every pair one process does not write."""
    if project.get("repository") is False or workdir.get("repository") is not True:
        return []
    return [f"set: code checkout: environment.json project.{key} {_brief(project.get(key))} is not "
            f"workdir.git.{key} {_brief(workdir.get(key))}: the pipeline runs from the checkout it imports its "
            "code from, so both name one checkout"
            for key in ("path", "commit") if not same_value(project.get(key), workdir.get(key))]


def _brief(value) -> str:
    """A path or commit as a message shows it: a commit id by its first 12 digits."""
    return repr(value[:12]) if isinstance(value, str) and re.fullmatch(r"[0-9a-f]{40}", value) else _shown(value)


def dirty_problems(env: dict) -> list[str]:
    """environment.json reads the checkout's git state twice (sacscale.pipeline.environment
    git_state): for the code (`project`) and for the working directory (`workdir.git`); one
    checkout at one commit (_checkout_problems), both say whether it differs from the commit.
    Called for sets made by the pipeline (with a plan.json) only."""
    project, workdir = opt(env, "project"), opt(env, "workdir", "git")
    if not isinstance(project, dict) or not isinstance(workdir, dict):
        return []
    problems = _checkout_problems(project, workdir)
    if problems or (project.get("path"), project.get("commit")) != (workdir.get("path"), workdir.get("commit")):
        return problems
    if isinstance(project.get("dirty"), bool) and isinstance(workdir.get("dirty"), bool) \
            and project["dirty"] != workdir["dirty"]:
        return [f"set: code dirty: environment.json project.dirty says {project['dirty']}, workdir.git.dirty says "
                f"{workdir['dirty']} ({workdir.get('changed_count')!r} changed files) of the same checkout and commit"]
    return []


# where environment.json holds git_state's record of the code and of the working directory
GIT_RECORDS = (("project",), ("workdir", "git"))


def _record_at(env: dict, keys: tuple) -> tuple[str, object]:
    """(the field as a message names it, its value): the first level that is not a dict
    where one is due, e.g. `workdir` null rather than `workdir.git` absent."""
    value = env
    for depth, key in enumerate(keys):
        if not isinstance(value, dict):
            return ".".join(keys[:depth]), value
        value = value.get(key, ABSENT)
    return ".".join(keys), value


def _outside_checkout_problems(field: str, record: dict) -> list[str]:
    """git_state records neither a commit nor a dirty flag for code outside any git checkout
    (`repository` false) or where git is not installed (null): none names such code. One
    beside it would put a commit on the page, and the dirty flags of one checkout are
    compared only where the code is in that checkout (_checkout_problems)."""
    if "repository" not in record or not (record["repository"] is False or record["repository"] is None):
        return []
    held = [key for key in ("commit", "dirty") if record.get(key) is not None]
    if not held:
        return []
    stated = " and ".join(f"{key} {_brief(record[key])}" for key in held)
    said = "false (no git checkout)" if record["repository"] is False else "null (no git)"
    return [f"set: code checkout: environment.json {field}.repository is {said}, yet {field} records {stated}: the "
            "pipeline records neither without a checkout, so they name no code that ran"]


def _unrecorded_problems(field: str, record) -> list[str]:
    """What git_state always writes, absent or of another kind: the record itself, its
    `repository` (true, false, or null without git) and, for a checkout, its dirty flag
    (true or false: git status), which the code's is compared with (dirty_problems)."""
    if not isinstance(record, dict):
        return [f"set: code dirty: environment.json {field} is {'absent' if record is ABSENT else _shown(record)}, "
                "not the git state the pipeline records (repository, commit, dirty): the code's dirty flag is "
                "compared with it"]
    repository = record.get("repository", ABSENT)
    if not (repository is None or isinstance(repository, bool)):
        return [f"set: code dirty: environment.json {field}.repository is "
                f"{'absent' if repository is ABSENT else _shown(repository)}, not true, false or null (no git): "
                "whether the code is a checkout's, and so has a commit and a dirty flag, is not known"]
    dirty = record.get("dirty", ABSENT)
    if repository is True and not isinstance(dirty, bool):
        return [f"set: code dirty: environment.json {field}.dirty is "
                f"{'absent' if dirty is ABSENT else 'null' if dirty is None else _shown(dirty)}, not true or false: "
                "the pipeline records whether the checkout differs from its commit (git status), which the page "
                "shows as clean or not"]
    return []


_REPOSITORY = {True: "true (a git checkout)", False: "false (no git checkout)", None: "null (no git)"}
_ONE_PROCESS = ("one pipeline process records both: both in one checkout, both outside any, both without git, the "
                "code in a checkout run from a folder outside any, or the code an installed copy outside any "
                "checkout whose installed_copy_of names the working directory's checkout")


def checkout_pair_findings(env: dict, strict: bool) -> tuple[list[str], list[str]]:
    """(problems, notes): `project` and `workdir.git` as one pipeline process records them
    (sacscale.pipeline.environment collect, project_state). The only pairs it writes: both
    in one checkout (repository true; path and commit: _checkout_problems); both outside any
    (false) or both without git (null: git is found for the process or not); the code in a
    checkout, the working directory outside any (a workflow folder copied elsewhere); the code an
    installed copy outside any checkout (false) beside the working directory's checkout, with
    `installed_copy_of` naming it (a copy that is the same code is recorded as that
    checkout). Any other pair is an edit, and would switch off the comparison of the dirty
    flags (dirty_problems). An older set's code outside any checkout beside a checkout
    without `installed_copy_of` (written since) is a note there, not a problem."""
    project, workdir = opt(env, "project"), opt(env, "workdir", "git")
    if not isinstance(project, dict) or not isinstance(workdir, dict):
        return [], []  # named by _unrecorded_problems
    ours, theirs = project.get("repository", ABSENT), workdir.get("repository", ABSENT)
    if not all(value is None or isinstance(value, bool) for value in (ours, theirs)):
        return [], []  # absent or of another kind: named by _unrecorded_problems
    copy_of = project.get("installed_copy_of", ABSENT)
    if (ours, theirs) == (False, True):
        if copy_of is ABSENT:
            return _unknown_each([f"set: code checkout: environment.json project.repository is false (no git "
                                  "checkout) without installed_copy_of, workdir.git.repository is true (a git "
                                  f"checkout): {_ONE_PROCESS}"], strict)
        if same_value(copy_of, workdir.get("path")):
            return [], []
    elif (ours is theirs or (ours, theirs) == (True, False)) and copy_of is ABSENT:
        return [], []  # (True, False): a workflow started outside any checkout, its code from one
    if copy_of is not ABSENT:
        return [f"set: code checkout: environment.json project.installed_copy_of {_brief(copy_of)} beside "
                f"project.repository {_REPOSITORY[ours]}, workdir.git.path {_brief(workdir.get('path'))} with "
                f"workdir.git.repository {_REPOSITORY[theirs]}: {_ONE_PROCESS}"], []
    return [f"set: code checkout: environment.json project.repository is {_REPOSITORY[ours]}, workdir.git.repository "
            f"is {_REPOSITORY[theirs]}: {_ONE_PROCESS}"], []


def git_record_findings(env: dict, strict: bool) -> tuple[list[str], list[str]]:
    """(problems, notes): environment.json's two git records as git_state writes them. A
    commit or dirty flag beside `repository` false is a problem in any set (git_state has
    always written neither there); a record, `repository` or checkout's dirty flag absent or
    of another kind is a problem in a set made by this code (`strict`), which writes each,
    a note in an older one. Without them the dirty flags go uncompared (dirty_problems); so
    they would be beside a pair of records one process does not write (checkout_pair_findings)."""
    problems, unrecorded = [], []
    for keys in GIT_RECORDS:
        field, record = _record_at(env, keys)
        unrecorded += _unrecorded_problems(field, record)
        problems += _outside_checkout_problems(field, record) if isinstance(record, dict) else []
    more_problems, notes = _unknown_each(unrecorded, strict)
    pair_problems, pair_notes = checkout_pair_findings(env, strict)
    return problems + more_problems + pair_problems, notes + pair_notes
