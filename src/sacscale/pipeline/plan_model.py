"""The plan's data: the machine it was made for, its run configurations, its runs in
execution order, and the schedule that orders each repeat."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import asdict, dataclass, field

from sacscale.cpus import available_cpus, parse_cpu_list


@dataclass
class Host:
    cuda_devices: int
    cpus: frozenset[int]

    @classmethod
    def detect(cls) -> Host:
        return cls(cuda_devices=visible_cuda_devices(), cpus=frozenset(available_cpus()))


def visible_cuda_devices() -> int:
    """CUDA devices this process would see, without importing torch (cheap, parse time)."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None and env.strip() in ("", "-1"):
        return 0
    smi = shutil.which("nvidia-smi")
    if not smi:
        return 0
    try:
        out = subprocess.run([smi, "-L"], check=False, capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    count = sum(1 for line in out.splitlines() if line.startswith("GPU "))
    if env is not None:
        count = min(count, len([d for d in env.split(",") if d.strip()]))
    return count


@dataclass
class RunConfig:
    name: str
    devices: str
    world_size: int
    device_kind: str                  # "cpu" or "cuda"
    cpu_pools: str                    # "auto" or one CPU list per rank joined by ";"
    num_envs: int
    batch_size: int | None = None
    sim_threads: int | None = None
    log_every: int = 10
    trace: bool = False
    timeout_s: float = 3600.0
    cuda_visible_devices: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    overrides: dict = field(default_factory=dict)
    description: str = ""
    trainer: str = "sacscale"

    def gpus_needed(self) -> int:
        if self.device_kind != "cuda":
            return 0
        return max(int(d) for d in self.devices.split(",")) + 1

    def pool_cpus(self) -> list[list[int]]:
        return [] if self.cpu_pools == "auto" else [parse_cpu_list(p) for p in self.cpu_pools.split(";")]


@dataclass
class Run:
    name: str
    config: str
    repeat: int
    seed: int
    index: int                        # position in the execution order, from 0


@dataclass
class Plan:
    preset: str
    preset_reason: str
    run_set: str
    prefix: str
    repeats: int
    iterations: int
    seed: int
    order: list[str]
    schedule: str
    execution_order: list[str]
    run_configs: dict[str, RunConfig]
    runs: list[Run]
    pairs: list[tuple[str, str]]
    probe: dict
    model_timeout_s: float
    matrix: dict | None = None        # the planned matrix the run configurations came from
    model: dict = field(default_factory=dict)
    description: str = ""
    evaluation: dict = field(default_factory=dict)  # enabled, and sacscale evaluate's envs_per_command and seconds

    def run(self, name: str) -> Run:
        for r in self.runs:
            if r.name == name:
                return r
        raise KeyError(name)

    def previous(self, name: str) -> Run | None:
        i = self.run(name).index
        return self.runs[i - 1] if i else None

    def gpus_needed(self) -> int:
        probe_gpus = 0
        if not str(self.probe["devices"]).startswith("cpu"):
            probe_gpus = max(int(d) for d in str(self.probe["devices"]).split(",")) + 1
        return max([probe_gpus] + [self.run_configs[c].gpus_needed() for c in self.order])

    def as_dict(self) -> dict:
        data = asdict(self)
        data["pairs"] = [list(p) for p in self.pairs]
        if data["matrix"] is None:
            del data["matrix"]  # plans of named presets stay as they were recorded
        return data


SCHEDULES = ("counterbalanced", "alternating")


def repeat_order(order: list[str], repeat: int, schedule: str = "counterbalanced") -> list[str]:
    """The configurations of repeat `repeat` (from 1) in the order they run.

    counterbalanced: `order` reversed on the repeats where the Thue-Morse sequence is 1
    (AB BA BA AB BA AB AB BA ...: ABBA BAAB), so slow drift of the machine favours no
    configuration: each position is taken equally often by each configuration over every
    2 repeats and linear drift cancels over every 4. alternating: `order` every repeat
    (ABAB; what the earlier run sets used).
    """
    if schedule == "alternating":
        return list(order)
    flipped = (repeat - 1).bit_count() % 2 == 1
    return list(reversed(order)) if flipped else list(order)
