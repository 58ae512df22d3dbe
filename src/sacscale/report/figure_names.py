"""The report's figures by name and file: what the workflow declares as the report rule's
outputs, in a module of its own so that Snakemake's start imports no plotting library."""

FIGURES = {
    "throughput_by_repeat": "throughput_by_repeat.png",
    "scaling_bars": "scaling_bars.png",
    "cumulative_steps": "cumulative_steps.png",
    "return_vs_time": "return_vs_time.png",
    "phase_times": "phase_times.png",
    "learning_curves": "learning_curves.png",
}
