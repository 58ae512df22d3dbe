"""Config values (docs/faults.md row 26): a run
configuration's env that sets SACSCALE_LOCK_DIR passed planning and gave that run a lock
folder of its own (the trainer's first-update lock of that time no longer seen by the
other runs; a relative one failed only when the run started)."""

from pathlib import Path

import pytest
import yaml

from sacscale.pipeline.runplan import Host, PlanError, resolve

PRESETS = yaml.safe_load((Path(__file__).resolve().parents[2] / "workflow" / "presets.yaml").read_text())
CPU_BOX = Host(cuda_devices=0, cpus=frozenset(range(2)))


@pytest.mark.parametrize("where", ["run_defaults", "run_configs"])
def test_a_runs_own_lock_folder_is_refused(where):
    env = {"env": {"SACSCALE_LOCK_DIR": "rel"}}
    config = {"preset": "cpu", "run_defaults": env} if where == "run_defaults" else \
        {"preset": "cpu", "run_configs": {"n1_cpu": {"devices": "cpu", "cpu_pools": "auto", "description": "d", **env}},
         "order": ["n1_cpu"]}
    says = r"\.env( \(preset cpu\))?: SACSCALE_LOCK_DIR is the machine's lock folder, not a run's"
    with pytest.raises(PlanError, match=says):
        resolve(config, PRESETS, CPU_BOX)


def test_a_runs_own_training_lock_folder_is_refused():
    """SACSCALE_MACHINE_LOCK_DIR in a run's env planned and did nothing: the training lock
    is taken by record-run, in snakemake's environment, before the trainer starts."""
    config = {"preset": "cpu", "run_defaults": {"env": {"SACSCALE_MACHINE_LOCK_DIR": "/tmp/otherlk"}}}
    with pytest.raises(PlanError) as info:
        resolve(config, PRESETS, CPU_BOX)
    assert str(info.value) == ("run_defaults.env: SACSCALE_MACHINE_LOCK_DIR is the folder of the "
                               "machine's training lock, which the run wrapper takes before the trainer starts (a "
                               "run's own setting has no effect): set it where snakemake runs")
