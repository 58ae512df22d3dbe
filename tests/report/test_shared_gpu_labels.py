"""Two ranks sharing one GPU are named as such wherever a run or a configuration is
labelled: the pipeline's progress line and the report's seed-shaped table."""

from pathlib import Path

import yaml

from sacscale.pipeline.runplan import Host, describe_run, resolve
from sacscale.report.tables import rank_label, seed_table

PRESETS = yaml.safe_load((Path(__file__).parents[2] / "workflow" / "presets.yaml").read_text())
H200_1 = Host(cuda_devices=1, cpus=frozenset(range(16)))


def test_rank_labels():
    assert rank_label("0", 1) == "1-GPU"
    assert rank_label("0,1", 2) == "2-GPU"
    assert rank_label("0,0", 2) == "2 ranks on 1 GPU"
    assert rank_label("0,0,1,1", 4) == "4 ranks on 2 GPUs"
    assert rank_label("cpu,cpu", 2) == "2-rank CPU"


def test_the_progress_line_says_the_ranks_share_the_gpu():
    plan = resolve({"preset": "h200x1_shared"}, PRESETS, H200_1)
    shared = next(r for r in plan.runs if r.config == "n2_shared")
    one = next(r for r in plan.runs if r.config == "n1_pool7")
    assert describe_run(plan, shared).startswith("2 ranks sharing 1 GPU, CPU pools 1-7;9-15, 1000 iterations, run ")
    assert describe_run(plan, one).startswith("1 GPU, CPU pools 1-7, 1000 iterations, run ")


def test_the_seed_table_heads_the_shared_column_as_ranks_on_one_gpu():
    config = {"mean": 30000.0, "std": 1000.0, "n": 5}
    summary = {"configs": {"n1_pool7": {**config, "devices": "0", "world_size": 1},
                           "n2_shared": {**config, "devices": "0,0", "world_size": 2}},
               "comparisons": [{"baseline": "n1_pool7", "compared": "n2_shared", "ratio_of_means": 1.0}]}
    header = seed_table(summary).header
    assert header[1:3] == ["1-GPU steps/s", "2 ranks on 1 GPU steps/s"]
