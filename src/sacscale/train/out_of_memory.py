"""Running out of memory while training, said as one line naming the settings that size what
was allocated. Within sacscale.learner_limits a learner can still need more than the device
or the machine at hand holds (a smaller GPU, a memory limit, other processes' tensors), and
torch's allocator then says so in words that name no setting."""

from __future__ import annotations

from sacscale.learner_limits import REFERENCE_NETWORKS

# How the allocators say it: CUDA's caching allocator ("CUDA out of memory"), the CPU
# allocator ("DefaultCPUAllocator: can't allocate memory"); a spawned rank's failure is
# passed on as its text, so the words are what is looked for, not only the exception's type.
_ALLOCATOR_WORDS = ("out of memory", "can't allocate memory")


def is_out_of_memory(exc: BaseException) -> bool:
    if isinstance(exc, MemoryError) or type(exc).__name__ == "OutOfMemoryError":  # torch's, a RuntimeError
        return True
    text = str(exc).lower()
    return any(words in text for words in _ALLOCATOR_WORDS)


def out_of_memory_line(cfg) -> str:
    """The line for a run of TrainConfig `cfg` (a resume's: as resolved from its checkpoint)
    that ran out of memory: the settings that size the learner (batch, widths) and the
    simulation and replay (envs)."""
    extra = cfg.extra if isinstance(cfg.extra, dict) else {}
    widths = ", ".join(f"{name} {list(extra.get(name, REFERENCE_NETWORKS[name]))}"
                       for name in ("actor_hidden", "critic_hidden"))
    if cfg.resume:  # a resume cannot change them: they are the run's, from its checkpoint
        cure = f"the run {cfg.resume} was made with them, so resume it on a machine that holds them"
        folder = "--resume"
    else:
        cure, folder = "give smaller ones", "--log-dir"
    return (f"out of memory on {cfg.devices}: the run needs more than this machine or device holds at "
            f"--batch-size {cfg.batch_size} with {widths}, --num-envs {cfg.num_envs} and --replay-per-env "
            f"{cfg.replay_per_env}; {cure} (train_meta.json in {folder} records the failure)")
