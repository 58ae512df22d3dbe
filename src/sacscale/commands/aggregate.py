"""`sacscale aggregate METRICS.json... --csv summary.csv --json summary.json`."""

from __future__ import annotations

import argparse
import math
import re
from pathlib import Path

from sacscale.commands._output_lock import holding_outputs
from sacscale.commands._outputs_together import write_together
from sacscale.commands._inputs import BadInput, json_value, read_json, refuse_one_file, refuse_output_on_input
from sacscale.analysis.record_shapes import METRICS_SHAPE
from sacscale.analysis.metrics import RUN_NAME
from sacscale.atomic import json_text, refuse_special
from sacscale.shapes import shape_problem
from sacscale.usage import say


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("metrics", nargs="+", help="per-run metrics JSON files (from analyze-run), in run order")
    parser.add_argument("--csv", required=True, help="per-run table to write")
    parser.add_argument("--json", required=True, help="per-configuration statistics and comparisons to write")
    parser.add_argument("--order", default="", help="configurations in the order to report them (comma list)")
    parser.add_argument("--pair", action="append", default=[], metavar="BASE:COMPARED",
                        help="a comparison (repeatable); default: each multi-rank config against the single-rank "
                             "one before it")
    parser.add_argument("--meta", default="{}",
                        help="JSON object stored as summary.json's 'meta' (run set, preset, ...)")


# the rates the summary reads with float(): a string of digits or a negative rate would be
# summarised as if analyze-run had written it
RATES = ("steady_env_steps_per_s", "tail_mean_total_fps")


def _metrics(path: str) -> dict:
    """One run's metrics (analyze-run's output): a JSON object naming its run and configuration."""
    data = read_json(path, "metrics file")
    if "config" in data and data["config"] is None and isinstance(data.get("run"), str):
        # analyze-run's output of a run folder whose name does not say its configuration
        raise BadInput(f"metrics file {path}: run {data['run'][:80]!r} has no run configuration "
                       "(config null): analyze-run reads it from the run folder's name, PREFIX_rK_CONFIG "
                       "(e.g. hand_r1_n1), or from the run's run.json; aggregate groups runs by it: name "
                       "the folders so and analyze them again")
    for key in ("run", "config"):
        if not isinstance(data.get(key), str):
            raise BadInput(f"metrics file {path}: not analyze-run's output (no {key!r})")
    for key in RATES:
        value = data.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or not math.isfinite(value) or value < 0):
            raise BadInput(f"metrics file {path}: {key} {str(value)[:40]!r} is not a rate (a finite number of env "
                           "steps/s, at least 0)")
    problem = shape_problem(data, METRICS_SHAPE, "")  # after the rates, whose message says what a rate is
    if problem:
        raise BadInput(f"metrics file {path}: not analyze-run's output (its {problem})")
    return data


def _refuse_two_plans(metrics: list[dict], paths: list[str]) -> None:
    """The runs of one plan: a plan names its runs `{prefix}_r{k}_{config}` with one prefix,
    so runs of two prefixes are two sets' (or presets'), whose ratio would compare machines
    or settings, not configurations. The metrics record no set of their own; a name of
    another pattern (not the pipeline's) is not compared."""
    first: tuple[str, str, str] | None = None
    for record, path in zip(metrics, paths):
        prefix = _plan_prefix(record["run"], record["config"])
        if prefix is None:
            continue
        if first is None:
            first = (prefix, record["run"], path)
        elif prefix != first[0]:
            raise BadInput(f"metrics file {path}: run {record['run']!r} is of another plan than {first[1]!r} "
                           f"({first[2]}): run-name prefixes {prefix!r} and {first[0]!r}; a summary "
                           "compares the runs of one set: give one set's metrics")


def _plan_prefix(run: str, config: str) -> str | None:
    """The prefix of `{prefix}_r{k}_{config}`, cut at the run's own configuration: a prefix
    and a configuration name may both hold `_r<digits>_` (`a_r1_b_r2_c` is prefix a of
    config b_r2_c, or prefix a_r1_b of config c), which the name alone cannot tell apart.
    A record whose name does not end in its configuration is parsed by the name alone."""
    match = re.fullmatch(r"(?P<prefix>.+)_r\d+_" + re.escape(config), run) or RUN_NAME.match(run)
    return match["prefix"] if match else None


def run(args: argparse.Namespace) -> int:
    metrics, given = [], {}
    for path in args.metrics:
        metrics.append(_metrics(path))  # BadInput: one line naming the file, exit 2 (sacscale.cli)
        first = given.setdefault(metrics[-1]["run"], path)
        if first is not path:  # one run counted twice would double its weight in every statistic
            raise BadInput(f"metrics file {path}: run {metrics[-1]['run']!r} is given twice (also {first})")
    _refuse_two_plans(metrics, args.metrics)
    refuse_output_on_input([("--csv", args.csv), ("--json", args.json)], [("metrics file", args.metrics)])
    refuse_one_file(("--csv", args.csv), ("--json", args.json))
    configs = {m["config"] for m in metrics}
    order = _order(args.order, configs) or list(dict.fromkeys(m["config"] for m in metrics))
    pairs = _pairs(args.pair, configs)
    meta = json_value(args.meta, "--meta")
    # pandas and scipy load here, after the inputs' checks: a refusal answers without them
    from sacscale.analysis.aggregate import runs_table, summarize

    try:
        summary = summarize(metrics, order, pairs or None, meta=meta)
        table = runs_table(metrics)
    except ValueError as exc:  # the summary's own checks of the order and pairs, made above as the options'
        raise BadInput(str(exc)) from None
    except (KeyError, TypeError) as exc:  # a file of another shape that has run and config
        raise BadInput(f"the metrics files are not all analyze-run's ({type(exc).__name__}: {exc}); "
                       f"files: {', '.join(args.metrics)}") from None
    for output in (args.csv, args.json):  # both refused before either is written
        refuse_special(Path(output))
    with holding_outputs(("--csv", args.csv), ("--json", args.json)):  # the table and its statistics: one run's
        write_together((args.csv, table.to_csv(index=False).encode()), (args.json, json_text(summary).encode()))
    _print_summary(summary)
    return 0


def _order(given: str, configs: set[str]) -> list[str]:
    """--order as a comma list, spaced as a person writes one ("a, b": configuration names hold
    no spaces); each a configuration of the metrics given, once (it is written into
    summary.json as given). Refused naming the option, not the summary's `order:` key."""
    order = [c.strip() for c in given.split(",") if c.strip()]
    if unknown := [c for c in order if c not in configs]:
        raise BadInput(f"--order {unknown[0]!r}: no configuration of the metrics given ({_theirs(configs)})")
    if twice := next((c for i, c in enumerate(order) if c in order[:i]), None):
        raise BadInput(f"--order: {twice!r} is listed twice")
    return order


def _pairs(given: list[str], configs: set[str]) -> list[tuple[str, str]]:
    """Each --pair BASE:COMPARED, spaced as --order may be ("a: b"), of two configurations of
    the metrics given, none twice. Refused naming the option, not the summary's `pairs:` key."""
    pairs: list[tuple[str, str]] = []
    for item in given:
        base, sep, other = (part.strip() for part in item.partition(":"))
        if not sep or not base or not other:
            raise BadInput(f"--pair {item!r}: expected BASE:COMPARED")
        if base == other:  # a ratio of 1.000x that compares nothing
            raise BadInput(f"--pair {item!r}: {base!r} compared with itself; a pair names two configurations")
        if unknown := [c for c in (base, other) if c not in configs]:
            raise BadInput(f"--pair {item!r}: {unknown[0]!r} is no configuration of the metrics given "
                           f"({_theirs(configs)})")
        if (base, other) in pairs:  # the comparison would be shown twice
            raise BadInput(f"--pair {item!r}: {base}:{other} is given twice")
        pairs.append((base, other))
    return pairs


def _theirs(configs: set[str]) -> str:
    return f"theirs: {', '.join(sorted(configs))}"


def _print_summary(summary: dict) -> None:
    for name, stats in summary["configs"].items():
        if stats["mean"] is None:  # no run of it recorded a rate
            say(f"{name}: no steady rate recorded (n={stats['n']})")
            continue
        say(f"{name}: mean {stats['mean']:,.1f} env steps/s (std {stats['std']:,.1f}, n={stats['n']})")
    for c in summary["comparisons"]:
        if c["ratio_of_means"] is not None:
            ci = c.get("ratio_ci95")
            say(f"{c['compared']} / {c['baseline']}: {c['ratio_of_means']:.3f}x"
                + (f" (95% CI {ci[0]:.3f} .. {ci[1]:.3f}, paired bootstrap over {c['ci_repeats']} repeats)"
                     if ci else ""))
    for run in summary.get("short_windows", []):
        say(f"warning: {run}: measurement window below {summary['short_window_s']:g} s")
