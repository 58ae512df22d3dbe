"""The report's verdict: what a set can show (its kind), the claim, each ratio with its
interval and what it supports, per-rank efficiency, the probe and the learning, in words."""

from __future__ import annotations

from sacscale.report import tables
from sacscale.report.document import Bullets, Heading, Paragraph
from sacscale.report.page_format import PAGE_FORMAT
from sacscale.report.tables import reproduces_seed
from sacscale.report.text import code, plain

SEED_SENTENCE = ("The seed is the original measurement this project reproduces: data-parallel FastSAC on a "
                 "2x RTX 5090 server, 1.7x to 2.4x the env steps/s of one GPU with two GPUs.")
CLAIM = "data-parallel training on 2 GPUs scales: more env steps/s than on 1 GPU, each GPU with its own CPU pool"
# Fewer paired repeats than this: a ratio is not a basis for a conclusion, and no interval is printed.
MIN_REPEATS = tables.MIN_REPEATS
FEW_REPEATS = 5   # below this, a bootstrap interval over the repeats is too uncertain on its own
WIDE = 0.10       # a half-width above 10% of the ratio: too wide for a figure


def ratio_line(c: dict) -> str:
    """One comparison in one line: the ratio, its interval and n, and whether they support a
    conclusion (too few repeats, an interval that includes 1, or one that lies above or below).
    Below MIN_REPEATS no interval is printed: a bootstrap over so few repeats is too narrow
    to read."""
    name = f"{code(c['compared'])} / {code(c['baseline'])}"
    if c.get("ratio_of_means") is None:
        return f"{name}: no ratio (a configuration has no measured run)."
    ci, n = c.get("ratio_ci95"), c.get("ci_repeats")
    per = c.get("per_repeat_ratio_stats") or {}
    n = n if n is not None else per.get("n", 0)
    text = f"{name} = {c['ratio_of_means']:.3f}x"
    if n < MIN_REPEATS:
        return text + (f", n = {n} paired repeat(s) (propagated std ±{c['ratio_std_propagated']:.3f}): too few "
                       f"repeats to support a conclusion (at least {MIN_REPEATS} are needed; no interval is given "
                       "below that); read it as noise.")
    text += (f", 95% CI {ci[0]:.3f} .. {ci[1]:.3f}" if ci else ", no confidence interval recorded")
    text += f", n = {n} paired repeat(s) (propagated std ±{c['ratio_std_propagated']:.3f})"
    if not ci:
        if per.get("n"):
            text += f"; per-repeat ratios {per['min']:.3f} .. {per['max']:.3f}"
        text += "; without an interval, no conclusion beyond the per-repeat spread"
    elif ci[0] > 1:
        text += ": the interval lies above 1, the compared configuration is faster"
    elif ci[1] < 1:
        text += ": the interval lies below 1, the compared configuration is slower"
    else:
        text += ": the interval includes 1, no conclusion about the direction"
    if ci:
        if (ci[1] - ci[0]) / 2 > WIDE * c["ratio_of_means"]:
            text += f"; the interval is wide (more than ±{100 * WIDE:.0f}% of the ratio): no precise figure"
        if n < FEW_REPEATS and per.get("n"):
            text += (f"; over {n} repeats a bootstrap interval is narrow, read it with the per-repeat ratios "
                     f"{per['min']:.3f} .. {per['max']:.3f}")
    return text + "."


def short_window_note(summary: dict, metrics: list[dict]) -> str:
    short = summary.get("short_windows") or []
    return (f" {len(short)} of {len(metrics)} runs were measured over less than "
            f"{summary.get('short_window_s', 30.0):g} s (see Measurement windows): a coarse rate." if short else "")


def efficiency_interval(c: dict) -> str:
    """The ratio's 95% interval over the rank multiple, where enough paired repeats give one."""
    per = c.get("per_repeat_ratio_stats") or {}
    n = c.get("ci_repeats") if c.get("ci_repeats") is not None else per.get("n", 0)
    ci, multiple = c.get("ratio_ci95"), c.get("rank_multiple")
    if not ci or not multiple or n < MIN_REPEATS:
        return ""
    return f", 95% CI {100 * ci[0] / multiple:.0f}% .. {100 * ci[1] / multiple:.0f}% (n = {n})"


def efficiency_line(summary: dict) -> str:
    parts = []
    for c in summary.get("comparisons", []):
        e = c.get("weak_scaling_efficiency")
        if e is not None:
            parts.append(f"{code(c['compared'])} {100 * e:.0f}% of {c.get('rank_multiple', 0):g}x the baseline's "
                         "env steps/s (ratio / rank multiple; 100% = each added rank as fast as the first)"
                         + efficiency_interval(c))
    return "; ".join(parts) + "." if parts else "no multi-rank comparison in this run set."


def probe_line(probe: dict | None) -> str:
    if not probe:
        return "no correctness probe result was given."
    verdict = "PASS" if probe.get("pass") else "FAIL"
    size = probe.get("world_size")
    where = ", ".join(plain(x) for x in (f"{size} rank{'' if size == 1 else 's'}" if size else None,
                                         probe.get("backend")) if x)
    in_graph = probe.get("allreduce_in_cuda_graph")
    graph = {True: ", all-reduce inside the CUDA graph", False: ", all-reduce outside a CUDA graph"}.get(in_graph, "")
    context = f"{where}{graph}".removeprefix(", ")
    context = f" ({context})" if context else ""  # a probe that recorded neither: no empty brackets
    if probe.get("pass") and size == 1:  # one rank shares no gradients: nothing of the sync was tested
        return (f"{verdict}, of one rank only: its gradients and parameters agree with a single-rank reference within "
                f"tolerance{context}; no gradient sync between ranks was tested.")
    return (f"{verdict}: the data-parallel ranks' gradients and parameters agree with a single-rank reference "
            f"within tolerance{context}." if probe.get("pass") else
            f"{verdict}: the data-parallel ranks disagree with the single-rank reference ({where}); "
            "see Correctness probe.")


def _mean(values):
    values = [v for v in values if isinstance(v, (int, float)) and v == v]
    return sum(values) / len(values) if values else None


def _kernels(evaluation: dict) -> dict:
    """An evaluation's normalised tracking; empty where it recorded none (older records
    lack it, a null overall or normalised_tracking holds none)."""
    return (evaluation.get("overall") or {}).get("normalised_tracking") or {}


def learning_line(evaluations: dict[str, dict] | None, metrics: list[dict]) -> str:
    """Per configuration: the evaluation's normalised tracking (1 = perfect) of the final
    policies against a robot that stands still, and falls per episode."""
    if not evaluations:
        return "not evaluated: this run set has no evaluation of its final policies."
    config_of = {m["run"]: m.get("config") or "?" for m in metrics}
    by_config: dict[str, list[dict]] = {}
    for run, e in evaluations.items():
        by_config.setdefault(config_of.get(run, run), []).append(e)
    parts = []
    for config, evals in by_config.items():
        kernels = [_kernels(e) for e in evals]
        lin, yaw = _mean([k.get("lin_vel_xy") for k in kernels]), _mean([k.get("yaw_rate") for k in kernels])
        still = [_kernels(e.get("baseline_stand_still") or {}) for e in evals]
        lin0, yaw0 = _mean([b.get("lin_vel_xy") for b in still]), _mean([b.get("yaw_rate") for b in still])
        falls = _mean([e["overall"].get("fall_rate") for e in evals])
        if None in (lin, yaw, lin0, yaw0):
            parts.append(f"{code(config)}: tracking not recorded")
            continue
        better = lin > lin0 and yaw > yaw0
        worse = lin <= lin0 and yaw <= yaw0
        judgement = ("tracks better than standing still" if better else
                     "no better than standing still" if worse else "better than standing still in one of the two")
        parts.append(f"{code(config)} ({len(evals)} run(s)): normalised tracking {lin:.2f} planar velocity, {yaw:.2f} "
                     f"yaw rate (standing still {lin0:.2f}, {yaw0:.2f}; 1 = perfect), "
                     f"{tables.num(falls, 2)} falls per episode: {judgement}")
    return "; ".join(parts) + "."


KIND_SCOPE = {
    "cpu": "CPU ranks, not GPUs",
    "same-gpus": "its configurations run on the same number of GPUs",
    "shared-gpu": "its ranks share one GPU: it measures CPU-side weak scaling and the two-rank code path "
                  "(gradients summed by gloo between graph segments), not the NCCL link between two GPUs",
}


def shares_a_gpu(stats: dict) -> bool:
    """A configuration whose ranks share a CUDA device (devices '0,0')."""
    devices = stats.get("devices") or ""
    items = devices.split(",") if isinstance(devices, str) else [str(d) for d in devices]
    return len(items) > len(set(items))


def any_shares_a_gpu(summary: dict) -> bool:
    return any(shares_a_gpu(s) for s in summary["configs"].values())


def hardware_words(summary: dict) -> str:
    """Where the set's configurations ran: 'on 2 GPUs', or where ranks share a GPU,
    'as 2 ranks sharing 1 GPU' (what an 'n2' name would otherwise suggest is not so)."""
    stats = list(summary["configs"].values())
    ranks = max((s.get("world_size") or 1) for s in stats)
    if not any_shares_a_gpu(summary):
        return f"on {ranks} GPU{'s' if ranks > 1 else ''}"
    gpus = max(len(set(str(s.get("devices") or "0").split(","))) for s in stats)
    return (f"as {ranks} ranks sharing {gpus} GPU{'s' if gpus > 1 else ''} (gradients summed by gloo between "
            "graph segments)")


def scope_words(summary: dict, kind: str, page_format: int = PAGE_FORMAT) -> str:
    """Why the seed's claim is not tested by this set. Formats 1 and 2 took CPU ranks
    (devices 'cpu,cpu') for ranks sharing a GPU and said so of a CPU set."""
    shared = any_shares_a_gpu(summary) and (kind != "cpu" or page_format < 3)
    return KIND_SCOPE["shared-gpu" if shared else kind]


def set_kind(summary: dict) -> str:
    """What a set can compare: 'cpu' (CPU ranks: a smoke test of the pipeline),
    'same-gpus' (GPU configurations with one rank count: pools and settings, not GPU
    counts), 'shared-gpu' (more ranks than GPUs: ranks sharing one GPU against one rank) or
    'gpu-counts' (GPU configurations with different rank counts, one GPU a rank: the claim)."""
    if not reproduces_seed(summary):
        return "cpu"
    counts = {s.get("world_size") or 1 for s in summary["configs"].values()}
    if len(counts) > 1 and any_shares_a_gpu(summary):
        return "shared-gpu"
    return "gpu-counts" if len(counts) > 1 else "same-gpus"


def glance_ratio(c: dict) -> str:
    """A comparison in a few words: the ratio, n, and the interval where n allows one."""
    name = f"{code(c['compared'])} / {code(c['baseline'])}"
    if c.get("ratio_of_means") is None:
        return f"{name}: no ratio"
    per = c.get("per_repeat_ratio_stats") or {}
    n = c.get("ci_repeats") if c.get("ci_repeats") is not None else per.get("n", 0)
    ci = c.get("ratio_ci95")
    text = f"{name} = {c['ratio_of_means']:.3f}x (n = {n}"
    if n < MIN_REPEATS:
        return text + ": too few repeats for a conclusion)"
    if not ci:
        return text + ", no interval recorded: no conclusion)"
    verdict = ("above 1: faster" if ci[0] > 1 else "below 1: slower" if ci[1] < 1 else
               "includes 1: no conclusion about the direction")
    return text + f", 95% CI {ci[0]:.3f} .. {ci[1]:.3f}, {verdict})"


def efficiency_glance(comps: list[dict]) -> str:
    return "; ".join(f"{code(c['compared'])} {100 * c['weak_scaling_efficiency']:.0f}%{efficiency_interval(c)}"
                     for c in comps if c.get("weak_scaling_efficiency") is not None)


def probe_glance(probe: dict | None, summary: dict | None = None) -> str:
    """The probe in a few words; a pass of fewer ranks than the set's widest configuration
    trains says so, as the Verdict line does: a one-rank probe tested no gradient sync
    (from page format 3; `summary` None: as the earlier formats wrote it)."""
    if not probe:
        return "no correctness probe result was given"
    if not probe.get("pass"):
        return "the correctness probe FAILED"
    size = probe.get("world_size")
    sizes = [c.get("world_size") for c in (summary or {}).get("configs", {}).values() if isinstance(c, dict)]
    widest = max((w for w in sizes if isinstance(w, int)), default=1)
    if isinstance(size, int) and 0 < size < widest:
        ranks = "one rank" if size == 1 else f"{size} ranks"
        return f"the correctness probe passed for {ranks} only (the runs train up to {widest} ranks)"
    return "the correctness probe passed"


def at_a_glance(summary: dict, metrics: list[dict], probe: dict | None, page_format: int = PAGE_FORMAT) -> str:
    """The report's first line: what this set can show and what it cannot."""
    probe_words = probe_glance(probe, summary if page_format >= 3 else None)
    comps = [c for c in summary.get("comparisons", []) if c.get("ratio_of_means") is not None]
    ratios = "; ".join(glance_ratio(c) for c in comps)
    kind = set_kind(summary)
    if kind == "cpu":
        return (f"**At a glance:** a CPU smoke set. The pipeline ran ({len(metrics)} runs) and "
                f"{probe_words}; the throughput of CPU ranks is not meaningful and says nothing about "
                "scaling on GPUs.")
    if kind == "same-gpus" and not comps:
        configs = ", ".join(code(c) for c in summary["configs"])
        return (f"**At a glance:** {configs} {hardware_words(summary)}, with no second configuration "
                f"to compare: a measurement of learning and throughput, neither a comparison nor GPU scaling; "
                f"{probe_words}.")
    if kind == "shared-gpu":
        return ("**At a glance:** two ranks sharing one GPU against one rank (gradients summed by gloo between "
                "graph segments): CPU-side weak scaling and the two-rank code path, not the NCCL link between two "
                "GPUs, so it cannot test the two-GPU claim" + (f": {ratios}" if ratios else "")
                + (f"; per-rank efficiency {efficiency_glance(comps)}" if efficiency_glance(comps) else "")
                + f"; {probe_words}.")
    if kind == "same-gpus":
        return (f"**At a glance:** compares configurations {hardware_words(summary)} (CPU pools, "
                f"settings or trainers), not GPU counts, so it cannot test the multi-GPU claim"
                + (f": {ratios}" if ratios else "") + f"; {probe_words}.")
    return ("**At a glance:** the claim, more env steps/s on more GPUs: " + (ratios or "no ratio measured")
            + f"; {probe_words}.")


def verdict_section(summary: dict, metrics: list[dict], plan: dict, probe: dict | None,
                    evaluations: dict[str, dict] | None, run_checks: str | None = None,
                    page_format: int = PAGE_FORMAT) -> list:
    comps = summary.get("comparisons", [])
    kind = set_kind(summary)
    claim = (f"Claim, from the seed: {CLAIM}. {SEED_SENTENCE}" if kind == "gpu-counts" else
             f"Claim, from the seed, not tested by this set ({scope_words(summary, kind, page_format)}): {CLAIM}. "
             f"{SEED_SENTENCE}")
    items = [claim,
             "Measured (steady env steps/s, ratio of means): "
             + (" ".join(ratio_line(c) for c in comps) if comps else "no comparison in this run set.")
             + short_window_note(summary, metrics)]
    # a line without data is left out, not filled with "none" or n/a
    if any(c.get("weak_scaling_efficiency") is not None for c in comps):
        items.append("Per-rank efficiency: " + efficiency_line(summary))
    if probe:
        items.append("Correctness probe: " + probe_line(probe))
    if evaluations:
        items.append("Learning: " + learning_line(evaluations, metrics))
    if run_checks:
        items.append("End-of-run checks: " + run_checks)
    blocks = [Heading("Verdict"), Bullets(items)]
    # the plan's reason and description name commands in backticks; read as text here, so without them
    reason = plain(str(plan.get("preset_reason", "reason not recorded")).replace("`", ""))
    what = (f"What ran: preset {code(plan.get('preset', '?'))} ({reason}); "
            f"{len(metrics)} runs of {', '.join(code(c) for c in summary['order'])}, "
            f"{plain(plan.get('repeats', '?'))} repeat(s) of {plain(plan.get('iterations', '?'))} iterations, "
            "one run at a time.")
    if plan.get("description"):
        # the preset's words: a config may have changed its runs, iterations or options
        what += " The preset: " + plain(" ".join(str(plan["description"]).replace("`", "").split()))
    if not reproduces_seed(summary) and "GPU system" not in str(plan.get("description", "")):
        what += " All runs are CPU ranks (gloo): the throughput says nothing about the GPU system."
    blocks.append(Paragraph(what))
    return blocks
