"""Our FastSAC trainer (`sacscale train`), one module per job:

- `config`: TrainConfig (one field per flag), its checks, the learner's SACConfig from it;
- `options`: the command-line parser made from TrainConfig;
- `preflight`: the checks before a job starts (devices, pools, log directory, disk, model);
- `job`: run_training, the job (one rank here, spawned ranks, or one rank of torchrun's);
- `rank`: run_rank, one rank's loop (collector -> replay -> update -> weights);
- `logs`: TensorBoard scalars, the progress bar and the lines above it;
- `checkpoint`: the checkpoint files; `resume`: continuing a run from them;
- `record`: train_meta.json, and the end-of-run check that synced ranks agree;
- `probe`: the trainer-path correctness probe (run_rank watched from outside).

The package itself holds only the light names (no torch), which the pipeline imports
to plan and check runs.
"""

from sacscale.train.config import (
    ALLREDUCE_PLACEMENTS,
    FIRST_UPDATE_DONE,
    RanksApart,
    TrainConfig,
    TrainingError,
    compiles_losses,
    extra_key_problem,
    sac_config,
)

__all__ = ["ALLREDUCE_PLACEMENTS", "FIRST_UPDATE_DONE", "RanksApart", "TrainConfig", "TrainingError",
           "compiles_losses", "extra_key_problem", "sac_config"]
