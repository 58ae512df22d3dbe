"""The report's video in the DAG: it waits for every run of the set (a failure in it can
stop no run), and with the video on, verify-env first checks that it can be made here."""

import re

from pipeline_helpers import snakemake


def _dry(workflow_dir, *args):
    proc = snakemake(workflow_dir, "-n", "--cores", "1", *args)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return proc.stdout + proc.stderr


def test_the_video_waits_for_every_run_and_is_checked_for_first(workflow_dir):
    (workflow_dir / "video.yaml").write_text("video: {enabled: true}\n")
    dag = _dry(workflow_dir, "--dag", "--configfile", "video.yaml")
    labels = dict(re.findall(r'^\s*(\d+)\[label = "([^"]+)"', dag, flags=re.M))
    edges = set(re.findall(r"^\s*(\d+) -> (\d+)$", dag, flags=re.M))
    (video,) = [n for n, label in labels.items() if label == "render_best_run"]
    runs = [n for n, label in labels.items() if label.startswith("train_run")]
    assert len(runs) == 4 and all((n, video) in edges for n in runs)

    on = _dry(workflow_dir, "-p", "--configfile", "video.yaml")
    (check,) = re.findall(r"^Shell command: (sacscale verify-env .*)$", on, flags=re.M)
    assert check.endswith("--require-render > logs/cpu/verify_env.log 2>&1")
    (render,) = re.findall(r"^Shell command: (sacscale render-best .*)$", on, flags=re.M)
    assert "--output reports/cpu/figures/best_run.webp --max-bytes 500000 " in render  # a small animated WebP
    off = _dry(workflow_dir, "-p")  # the CPU preset's default: no video, no check
    assert "--require-render" not in off and "render_best_run" not in off
