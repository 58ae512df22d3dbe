"""An evaluation record against the trainer's record of the run it evaluates
(runs/<run>/train_meta.json): the policy of a completed run is its last checkpoint, which
holds rank 0's env steps when it stopped (`rank0_env_steps`; evaluate records the
checkpoint's as `env_steps`), and evaluate observes the way the run trained
(`config.tilt_obs`, from the checkpoint's task). The policy's hash, its iteration and the
model are bound elsewhere (sacscale.evidence.binding)."""

from __future__ import annotations

from dataclasses import dataclass, field

from sacscale.evidence.result import same_value

COMPLETED = "completed"


@dataclass
class RunFindings:
    problems: list[str] = field(default_factory=list)
    unrecorded: list[str] = field(default_factory=list)  # a field an older record lacks
    notes: list[str] = field(default_factory=list)


def _steps_findings(rel: str, ev: dict, meta: dict, out: RunFindings) -> None:
    if "env_steps" not in ev:
        return
    status = meta.get("status")
    if status != COMPLETED:
        # an interrupted run's last checkpoint may precede its last step
        out.notes.append(f"{rel}: env_steps not compared with train_meta.json rank0_env_steps: the run's status is "
                         f"{str(status)[:30]!r}, not {COMPLETED!r}")
    elif "rank0_env_steps" not in meta:
        out.unrecorded.append(f"{rel}: train_meta.json rank0_env_steps: not recorded by this older set, so env_steps "
                              f"is not compared with it")
    elif not same_value(ev["env_steps"], meta["rank0_env_steps"]):
        out.problems.append(f"{rel}: env_steps {str(ev['env_steps'])[:20]}, but the run's train_meta.json "
                            f"rank0_env_steps is {str(meta['rank0_env_steps'])[:20]}: its final policy's count")


def _tilt_findings(rel: str, ev: dict, meta: dict, out: RunFindings) -> None:
    protocol = ev.get("protocol") if isinstance(ev.get("protocol"), dict) else {}
    config = meta.get("config") if isinstance(meta.get("config"), dict) else {}
    if "tilt_obs" in protocol and "tilt_obs" in config and not same_value(protocol["tilt_obs"], config["tilt_obs"]):
        out.problems.append(f"{rel}: protocol.tilt_obs {str(protocol['tilt_obs'])[:20]!r}, but the run trained with "
                            f"train_meta.json config.tilt_obs {str(config['tilt_obs'])[:20]!r}")


def run_findings(rel: str, ev: dict, meta: dict | None) -> RunFindings:
    """The evaluation against its run's train_meta.json (None: the run has none, which the
    run checks name)."""
    out = RunFindings()
    if meta is not None:
        _steps_findings(rel, ev, meta, out)
        _tilt_findings(rel, ev, meta, out)
    return out
