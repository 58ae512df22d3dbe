"""The environment record: the project's commit and stored diff, the versions of what
runs it, the GPUs, the CPUs and their topology, and whether this machine can run a
plan (`sacscale verify-env`, the pipeline's verify_env rule)."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

import sacscale
from sacscale.atomic import atomic_write_bytes
from sacscale.cpus import available_cpus, format_cpu_list, parse_cpu_list
from sacscale.git_command import PATCH_OPTIONS, UNTRACKED, content_index, run_git
from sacscale.hashes import sha256_file
from sacscale.parallel.topology import recorded_variable
from sacscale.pipeline.checkout_of_project import not_this_checkout, refuse_distrusted, refuse_odd_git_files
from sacscale.pipeline.code_content import check_record, linked_folder
from sacscale.pipeline.installed_copy import installed_copy_differences
from sacscale.pipeline.overrides import check_replay_memory, planned_extra_problem, replay_rows_per_env
from sacscale.pipeline.plan_values import DEVICES, PlanError, shown
from sacscale.pipeline.recordable_checkout import NOT_SOURCE, CheckoutRefused, refuse_unrecordable
from sacscale.shapes import Maybe, record_problem

LEARNER_MODULE = "sacscale.learn.learner"
LEARNER_CLASS = "FastSACLearner"
HOOKS = "set_gradient_graph_hooks"
COMMAND_MODULES = {"train": "train", "probe": "probe", "prepare-model": "prepare_model", "env-bench": "env_bench"}


# an untracked file larger than this is listed (size, SHA-256), not stored: the diff is for
# code, and a large untracked file is almost always a build output, a wheel or data
STORE_LIMIT_BYTES = 256 * 1024


# what a nested git repository (not a submodule) is listed with: its files are not stored
NESTED_REPOSITORY = "a git repository of its own, not a submodule: its files are not stored"


def source_diff(top: str) -> tuple[bytes, list[str], list[dict]]:
    """(patch, untracked files stored in it, untracked files only listed): the tree's changes
    against HEAD, binary-safe, with untracked non-ignored files up to STORE_LIMIT_BYTES as
    new files; larger ones as {path, bytes, sha256}, a nested repository as {path, why}.
    Reads only; writes nothing into the repository. git runs as sacscale.git_command pins
    it, whatever the user's settings; a checkout it could not record is refused."""
    refuse_unrecordable(top)
    excludes = [f":(exclude){d}" for d in NOT_SOURCE]
    with content_index(top) as index:
        tracked = run_git(["diff", "HEAD", *PATCH_OPTIONS, "--", ".", *excludes], top, extra_env=index, timeout=300,
                          check=True).stdout
        listing = run_git(["ls-files", *UNTRACKED, "-z", "--", ".", *excludes], top,
                          extra_env=index, timeout=300, check=True).stdout
    stored, listed, parts = [], [], [tracked]
    for raw in sorted(n for n in listing.split(b"\0") if n):
        name, path = shown_name(raw), Path(top) / os.fsdecode(raw)
        if raw.endswith(b"/"):  # git lists a nested repository, not its files
            listed.append({"path": name, "why": NESTED_REPOSITORY})
            continue
        if linked := linked_folder(path, name):  # git's diff of it says nothing; check_record refuses one in the code
            listed.append(linked)
            continue
        size = path.stat().st_size if path.is_file() and not path.is_symlink() else 0  # a link is stored as a link
        if size > STORE_LIMIT_BYTES:
            listed.append({"path": name, "bytes": size, "sha256": sha256_file(path)})
            continue
        out = run_git([b"diff", b"--no-index", *map(os.fsencode, PATCH_OPTIONS), b"--", b"/dev/null", raw],
                      os.fsencode(top), timeout=300)
        if out.returncode not in (0, 1):  # 1: "differs", which a new file always does
            raise RuntimeError(f"git diff --no-index {name}: {out.stderr.decode(errors='replace').strip()}")
        stored.append(name)
        parts.append(out.stdout)
    patch = b"".join(parts)
    held = check_record(top, patch, listed)  # a name is stored only where the patch holds it
    return patch, [name for name in stored if name in held], listed


def write_source_diff(project: dict, path: Path) -> dict:
    """Store the diff of the project's tree at `path`; its description for the record."""
    listed: list[dict] = []
    if not project.get("repository"):
        data, untracked, note = b"", [], f"not a git checkout ({project.get('error')}): no diff"
    else:
        data, untracked, listed = source_diff(project["path"])
        note = ("git diff HEAD --binary plus untracked files as new files, outside " + ", ".join(NOT_SOURCE)
                + f"; untracked files over {STORE_LIMIT_BYTES // 1024} KiB are listed, not stored")
    atomic_write_bytes(path, data)
    if project.get("repository"):
        # the record is dirty when its stored diff holds or lists a change, or git names a changed source file
        project["dirty"] = bool(data or listed or untracked or project.get("dirty"))
    commit = project.get("commit")
    info = {"file": path.name, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
            "untracked_files": untracked, "how": note,
            # no commit, no rebuild command (it said `git checkout None`)
            "apply": f"git checkout {commit} && git apply --binary {path.name}" if commit else None}
    if listed:
        info["untracked_not_stored"] = listed
    if listed and commit:
        info["apply"] += (" (what untracked_not_stored lists is not in it: bring a file by its SHA-256, "
                          "a nested repository as it was)")
    return info


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _run(cmd: list[str], cwd: str | None = None) -> str | None:
    """The command's stdout (terminal escape codes removed), or None when it fails."""
    if not shutil.which(cmd[0]):
        return None
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=60, cwd=cwd)
    except (OSError, subprocess.SubprocessError):
        return None
    return _ANSI.sub("", out.stdout) if out.returncode == 0 else None


def _git_line(top: str, *args: str) -> str | None:
    """git's one-line answer in the checkout at `top`, or None when it fails."""
    try:
        out = run_git(list(args), top, text=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def shown_name(raw: bytes) -> str:
    """A file name as git gives it (bytes), as text for the record: UTF-8, any other byte
    written as its escape (\\xff) so the record stays UTF-8 JSON."""
    return raw.decode("utf-8", errors="backslashreplace")


def status_entries(porcelain: bytes) -> list[list[bytes]]:
    """The names of each entry of `git status --porcelain -z`: one, or two for a rename or
    copy (its new name, then the old). With -z git writes every byte of a name as it is,
    unquoted, whatever core.quotePath says, and ends each name with NUL, which no name holds."""
    fields, entries = porcelain.split(b"\0"), []
    while fields:
        field = fields.pop(0)
        if len(field) < 4:  # the empty field after the last NUL
            continue
        names = [field[3:]]
        if b"R" in field[:2] or b"C" in field[:2]:
            names.append(fields.pop(0) if fields else b"")
        entries.append(names)
    return entries


def is_source(name: bytes) -> bool:
    """Whether a changed name is code: anything outside the pipeline's outputs (NOT_SOURCE)."""
    return name.split(b"/", 1)[0].decode("utf-8", errors="replace") not in NOT_SOURCE


def _status(top: str) -> list[list[bytes]] | None:
    """The changed entries of the checkout at `top`, untracked files listed (as the project's
    .gitignore files judge them) whatever status.showUntrackedFiles says; None when git fails."""
    try:
        with content_index(top) as index:
            out = run_git(["status", "--porcelain", "-z", "--untracked-files=no", "--ignore-submodules=none"], top,
                          extra_env=index)
            new = run_git(["ls-files", *UNTRACKED, "--directory", "--no-empty-directory", "-z"], top, extra_env=index)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0 or new.returncode != 0:
        return None
    return status_entries(out.stdout) + [[name] for name in new.stdout.split(b"\0") if name]


def git_state(path: Path, package: bool = False) -> dict:
    """The checkout holding `path` (the package's own folder when `package`: its files must be
    tracked there): commit, branch, dirty. CheckoutRefused where git will not read it."""
    if not shutil.which("git"):
        return {"path": str(path), "repository": None, "error": "git is not installed"}
    probe = run_git(["rev-parse", "--show-toplevel"], str(path))
    if probe.returncode != 0:
        refuse_distrusted(probe.stderr, str(path))
        error = probe.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["unknown"]
        return {"path": str(path), "repository": False, "error": error[0]}
    top = os.fsdecode(probe.stdout.rstrip(b"\n"))
    elsewhere = not_this_checkout(str(path), top, package)
    if elsewhere:
        return {"path": str(path), "repository": False, "error": elsewhere}
    refuse_odd_git_files(top)
    entries = _status(top)
    # "dirty" means the code differs from the commit, as the stored diff does: the run set's
    # own outputs (results/<set>/ appears before verify_env runs) do not make a clean checkout dirty;
    # a rename or copy is code when either of its names is
    changed = [" -> ".join(shown_name(n) for n in reversed(names)) for names in entries or []]
    return {
        "path": top,
        "repository": True,
        "commit": _git_line(top, "rev-parse", "HEAD"),
        "branch": _git_line(top, "rev-parse", "--abbrev-ref", "HEAD"),
        "dirty": None if entries is None else any(is_source(n) for names in entries for n in names),
        "changed_files": changed[:200],
        "changed_count": len(changed),
    }


def project_state(package_dir: Path) -> dict:
    """The git state of the code that runs: the checkout the package is imported from,
    or, for a copy installed outside any checkout (pip install .), the working directory's
    checkout when its src/sacscale is the same code, so the commit and the stored diff
    still rebuild it. A copy that differs is recorded as such, without a commit."""
    state = git_state(package_dir, package=True)
    if state.get("repository") is not False:  # a checkout, or no git at all
        return state
    workdir = git_state(Path.cwd())
    if not workdir.get("repository"):
        return state
    differences = installed_copy_differences(package_dir, Path(workdir["path"]))
    if differences:
        return state | {"installed_copy_of": workdir["path"], "installed_copy_differs": differences[:50]}
    return workdir | {"located_by": f"the working directory's checkout: the installed copy at {package_dir} "
                                    "has the same importable files as its src/sacscale"}


def code_state(package_dir: Path) -> dict:
    """project_state for a run's record: where git will not read the checkout now, its reason
    as the record's error (no commit can be named), not a failed run."""
    try:
        return project_state(package_dir)
    except CheckoutRefused as exc:
        return {"path": str(package_dir), "repository": None, "error": str(exc)}


def _version(module: str) -> str | None:
    try:
        return getattr(importlib.import_module(module), "__version__", "unknown")
    except Exception:  # an absent or broken package is recorded, not fatal
        return None


def distributions() -> dict[str, str]:
    """Every installed distribution (importlib.metadata) -> its version, sorted by name; the
    first of a name on sys.path wins, as it does for imports."""
    found: dict[str, str] = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name and name not in found:
            found[name] = dist.version
    return dict(sorted(found.items(), key=lambda item: item[0].lower()))


def torch_info() -> dict:
    try:
        import torch  # heavy, and may be missing: only when the record asks for it
    except Exception as exc:
        return {"version": None, "error": str(exc), "cuda_devices": 0, "gpus": []}
    info = {
        "version": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
        "cuda_available": torch.cuda.is_available(),
        "cuda_devices": torch.cuda.device_count() if torch.cuda.is_available() else 0,
        "nccl": None,
        "gloo": bool(getattr(torch.distributed, "is_gloo_available", lambda: False)()),
        "gpus": [],
    }
    if info["cuda_devices"]:
        try:
            info["nccl"] = ".".join(str(x) for x in torch.cuda.nccl.version())
        except Exception:
            pass
        for i in range(info["cuda_devices"]):
            props = torch.cuda.get_device_properties(i)
            info["gpus"].append({
                "index": i,
                "name": props.name,
                "memory_mib": props.total_memory // 2**20,
                "capability": f"{props.major}.{props.minor}",
            })
    return info


def nvidia_info() -> dict:
    query = _run(["nvidia-smi", "--query-gpu=index,name,memory.total,driver_version,pci.bus_id",
                  "--format=csv,noheader"])
    return {
        "nvidia_smi": shutil.which("nvidia-smi") is not None,
        "gpus": [dict(zip(("index", "name", "memory", "driver", "pci_bus_id"), [f.strip() for f in line.split(",")]))
                 for line in (query or "").splitlines() if line.strip()],
        "topo": _run(["nvidia-smi", "topo", "-m"]),
    }


def cpu_info() -> dict:
    model = None
    lscpu = _run(["lscpu"])
    for line in (lscpu or "").splitlines():
        if line.startswith("Model name:"):
            model = line.split(":", 1)[1].strip()
            break
    if model is None and Path("/proc/cpuinfo").is_file():
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    available = sorted(available_cpus())
    return {
        "model": model or platform.processor() or None,
        "logical_cpus": os.cpu_count(),
        "available": format_cpu_list(available),
        "available_count": len(available),
        "layout": _run(["lscpu", "-e=CPU,CORE,SOCKET,NODE"]),
    }


def learner_info() -> dict:
    info = {"module": LEARNER_MODULE, "file": None, "class": LEARNER_CLASS, "graph_hooks": False, "error": None}
    try:
        module = importlib.import_module(LEARNER_MODULE)
    except Exception as exc:  # not written yet, or broken: record why
        info["error"] = f"{type(exc).__name__}: {exc}"
        return info
    info["file"] = getattr(module, "__file__", None)
    cls = getattr(module, LEARNER_CLASS, None)
    if cls is None:
        info["error"] = f"{LEARNER_MODULE} has no class {LEARNER_CLASS}"
        return info
    info["graph_hooks"] = callable(getattr(cls, HOOKS, None))
    return info


def commands_info() -> dict:
    out = {}
    for name, module in COMMAND_MODULES.items():
        try:
            spec = importlib.util.find_spec(f"sacscale.commands.{module}")
        except ImportError:
            spec = None
        out[name] = spec is not None
    return out


SLURM_VARS = ("SLURM_CLUSTER_NAME", "SLURM_JOB_ID", "SLURM_JOB_PARTITION", "SLURM_JOB_NODELIST", "SLURMD_NODENAME")


def host_info() -> dict:
    """Where this process runs: the host name and, inside a SLURM job, the job and its node
    (SLURMD_NODENAME), so a run set records which node its environment and its runs were on."""
    slurm = {k: os.environ[k] for k in SLURM_VARS if os.environ.get(k)}
    return {"name": socket.gethostname(), "slurm": slurm or None}


def collect() -> dict:
    package_dir = Path(sacscale.__file__).resolve().parent
    return {
        "recorded_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "project": project_state(package_dir),
        "workdir": {"git": git_state(Path.cwd())},
        "sacscale": {"version": getattr(sacscale, "__version__", None), "package_dir": str(package_dir)},
        "python": {"version": platform.python_version(), "executable": sys.executable},
        "platform": platform.platform(),
        "host": host_info(),
        "versions": {
            "torch": _version("torch"),
            "mujoco": _version("mujoco"),
            "snakemake": _version("snakemake"),
            "numpy": _version("numpy"),
            "tensorboard": _version("tensorboard"),
            "pandas": _version("pandas"),
            "matplotlib": _version("matplotlib"),
        },
        # every installed distribution; `versions` above keeps the main ones, as older records have them
        "distributions": distributions(),
        "torch": torch_info(),
        "nvidia": nvidia_info(),
        "cpu": cpu_info(),
        "env": {k: v for k, v in sorted(os.environ.items()) if recorded_variable(k)},
        "learner": learner_info(),
        "commands": commands_info(),
    }


# what check_plan and verify-env read of a plan (the planner's plan.json)
PLAN_SHAPE = {"preset": str, "preset_reason": str, "probe": {"devices": str},
              "run_configs": {str: {"devices": str, "cpu_pools": Maybe(str)}}}


def plan_problem(plan) -> str | None:
    """Why `plan` is not a resolved run plan that check_plan can read, in words that follow
    "not a resolved run plan (", or None: checked before anything is collected or written."""
    problem = record_problem(plan, PLAN_SHAPE)
    if problem:
        return problem
    devices = [("probe.devices", plan["probe"]["devices"])]
    devices += [(f"run_configs.{name}.devices", rc["devices"]) for name, rc in plan["run_configs"].items()]
    for key, value in devices:
        if not DEVICES.fullmatch(value):
            return f"its {key!r} is {value[:40]!r}, neither 'cpu' ranks nor CUDA device indices"
    for name, rc in plan["run_configs"].items():
        pools = [] if rc.get("cpu_pools", "auto") in (None, "auto") else rc["cpu_pools"].split(";")
        for pool in pools:
            try:
                parse_cpu_list(pool)
            except ValueError as exc:
                return f"its 'run_configs.{name}.cpu_pools': {exc}"
    return None


def check_plan(plan: dict, env: dict) -> list[str]:
    """Problems, each naming the key of the plan that the machine cannot honour."""
    problems = []
    visible = env["torch"].get("cuda_devices", 0)
    available = available_cpus()
    preset = plan.get("preset", "?")
    needs = [(f"probe.devices ({plan['probe']['devices']})", str(plan["probe"]["devices"]))]
    needs += [(f"run_configs.{name}.devices ({rc['devices']})", rc["devices"])
              for name, rc in plan.get("run_configs", {}).items()]
    for key, devices in needs:
        if devices.startswith("cpu"):  # each CPU rank needs a CPU of its own, as planning judges with host checks
            ranks = len(devices.split(","))
            if ranks > len(available):
                problems.append(f"{key}: {ranks} CPU ranks for the {len(available)} CPU(s) here (CPUs available to "
                                f"this process: {format_cpu_list(available)}); each rank needs a CPU of its own")
            continue
        need = max(int(d) for d in devices.split(",")) + 1
        if need > visible:
            problems.append(
                f"{key}: preset {preset} needs {need} CUDA device(s); {visible} visible to torch "
                f"(CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', 'unset')})"
            )
    for name, rc in plan.get("run_configs", {}).items():
        if rc.get("cpu_pools", "auto") in (None, "auto"):
            continue
        for rank, pool in enumerate(rc["cpu_pools"].split(";")):
            absent = set(parse_cpu_list(pool)) - available
            if absent:
                problems.append(
                    f"run_configs.{name}.cpu_pools: rank {rank} names CPUs {format_cpu_list(absent)} that do not "
                    f"exist here (CPUs available to this process: {format_cpu_list(available)})"
                )
    return problems + _replay_memory_problems(plan)


def _replay_memory_problems(plan: dict) -> list[str]:
    """Our trainer's CPU ranks' replays against this machine's memory: planning judges them
    on the machine that plans only (not with host_checks: false), so here, where the runs
    run, they are judged again."""
    problems = []
    for name, rc in plan.get("run_configs", {}).items():
        if (rc.get("trainer") or "sacscale") != "sacscale" or not rc["devices"].startswith("cpu"):
            continue
        unread = _unread_replay_values(rc, f"run_configs.{name}") or planned_extra_problem(
            rc.get("overrides", {}), f"run_configs.{name}")
        if unread:
            problems.append(unread)
            continue
        try:
            check_replay_memory(rc, len(rc["devices"].split(",")),
                                lambda field, name=name: f"run_configs.{name}.{field}")
        except PlanError as exc:
            problems.append(str(exc))
    return problems


def _unread_replay_values(rc: dict, key: str) -> str | None:
    """A hand-edited plan value the replay memory check cannot read (planning writes whole
    numbers and one spelling of an override): named, not skipped, or the check passes unmade."""
    overrides = rc.get("overrides", {})
    if not isinstance(overrides, dict):  # a list or text: no replay value could be found in it
        return (f"{key}.overrides: {shown(overrides)} is not an object (option -> value), as planning writes "
                "it: the replay memory check cannot read it")
    spellings = [k for k in overrides if str(k).replace("-", "_") == "replay_per_env"]
    if len(spellings) > 1:
        return (f"{key}.overrides: {' and '.join(map(str, spellings))} both set the trainer's --replay-per-env "
                "(planning gives it once): the replay memory check cannot tell which one the run takes")
    num_envs = rc.get("num_envs")
    if not isinstance(num_envs, int) or isinstance(num_envs, bool):
        return (f"{key}.num_envs: {shown(num_envs)} is not a whole number, as planning writes it: the replay "
                "memory check cannot read it")
    if num_envs < 1:
        return f"{key}.num_envs: {num_envs} is not a positive number of envs: the replay memory check cannot judge it"
    for field, value in [(f"overrides.{k}", overrides[k]) for k in spellings]:
        if replay_rows_per_env(value) is None:
            return (f"{key}.{field}: {shown(value)} is not a whole number, as planning writes it: the replay "
                    "memory check cannot read it")
    return None
