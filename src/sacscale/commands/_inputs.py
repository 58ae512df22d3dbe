"""Reading the commands' input files so that a bad one is one line naming it.

`BadInput` is bad input found by a command: `sacscale` prints its message as one line
and exits 2 (sacscale.cli). The readers bound what they read (size, nesting, time for a
pipe) and say what is wrong with the file: missing, a directory, unreadable, not UTF-8,
not JSON, nested too deep, too large.
"""

from __future__ import annotations

import argparse

import json
import os
import stat
from pathlib import Path

from sacscale.atomic import file_kind
from sacscale.checks import finite_float
from sacscale.commands import BadInput
from sacscale.eval.evaluate_checks import foreign_link_problem as _foreign_link_problem, size_problem
from sacscale.held_names import unheld_path_problem
from sacscale.pipeline.config_check import ConfigError, read_text as _read_text
from sacscale.reading import RecordJSONError, refuse_lone_surrogates
from sacscale.shapes import shape_problem

# Evidence JSON (metrics, evaluations, plans, environment records) is kilobytes; a recorded
# topology a few KB. Far larger input is a wrong file, or an endless one (/dev/zero).
MAX_JSON_BYTES = 64 << 20
MAX_TEXT_BYTES = 4 << 20


def read_text(path: str | os.PathLike, what: str, limit: int = MAX_TEXT_BYTES, streams: bool = False) -> str:
    """The text of `path`, bounded; `streams` also takes a pipe (`<(lscpu -e)`)."""
    try:
        return _read_text(path, what, limit, streams=streams)
    except ConfigError as exc:
        raise BadInput(str(exc)) from None


class _NonFinite(ValueError):
    pass


class _Duplicate(ValueError):
    pass


def _unique_keys(pairs):
    out = {}
    for key, value in pairs:
        if key in out:
            raise _Duplicate(repr(key)[:80])
        out[key] = value
    return out


def _no_constant(name: str):
    raise _NonFinite(name)


def _strict_json(text: str, named: str, kind: type | None):
    """The JSON value of `text`, read as strictly as the project's records are: a key given
    twice, NaN or Infinity, or a lone surrogate (which no UTF-8 output can hold: the CSV of
    `aggregate` ended in a UnicodeEncodeError) is BadInput naming `named`."""
    try:
        value = json.loads(text, parse_constant=_no_constant, object_pairs_hook=_unique_keys)
        refuse_lone_surrogates(value)
    except _Duplicate as exc:
        raise BadInput(f"{named}: duplicate key {exc} (a reader would see one value, "
                       "this command another)") from None
    except _NonFinite as exc:
        raise BadInput(f"{named}: holds {exc}, which JSON does not define (the project writes none)") from None
    except RecursionError:
        raise BadInput(f"{named}: JSON nested too deep") from None
    except RecordJSONError as exc:
        raise BadInput(f"{named}: {exc.msg}") from None
    except ValueError as exc:
        raise BadInput(f"{named}: not JSON ({exc})") from None
    if kind is not None and not isinstance(value, kind):
        raise BadInput(f"{named}: a JSON {kind.__name__.replace('dict', 'object')} was expected, "
                       f"got {type(value).__name__}")
    return value


def read_json(path: str | os.PathLike, what: str, limit: int = MAX_JSON_BYTES, kind: type | None = dict):
    """The JSON value of `path` (a `kind`, when given), bounded."""
    return _strict_json(read_text(path, what, limit), f"{what} {path}", kind)


def read_evaluations(paths: list[str]) -> dict[str, dict]:
    """`sacscale evaluate`'s outputs by run (each file's stem), read strictly; one that
    cannot be scored as the best run is chosen (sacscale.eval.best) is BadInput naming it
    (`manifest --keep-best` of one without its 'overall' ended in a KeyError naming none)."""
    from sacscale.eval.best import score
    from sacscale.report.build import SCORED_EVALUATION_SHAPE

    evaluations = {}
    for path in paths:
        evaluation = evaluations[Path(path).stem] = read_json(path, "evaluation")
        problem = shape_problem(evaluation, SCORED_EVALUATION_SHAPE, "")
        if problem:  # a fall rate as a string was scored as its number
            raise BadInput(f"evaluation {path}: not `sacscale evaluate`'s output (its {problem})")
        try:
            score(evaluation)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise BadInput(f"evaluation {path}: not `sacscale evaluate`'s output (its 'overall' figures: "
                           f"{type(exc).__name__}: {exc})") from None
    return evaluations


def json_value(text: str, what: str, kind: type | None = dict):
    """A JSON value given on the command line (e.g. --meta)."""
    return _strict_json(text, what, kind)


def refuse_names_not_text(*named: tuple[str, str | os.PathLike | None]) -> None:
    """Each (option, path) given whose name cannot be held as text (bytes that are not UTF-8),
    named with the cure before any work: MuJoCo, the event reader and the records take only
    text names, and failed on it later under another cause."""
    for option, value in named:
        if value is not None and (problem := unheld_path_problem(option, value)):
            raise BadInput(problem)


def model_problem(path: str | None) -> str | None:
    """Why `--model PATH` is not the task's model (missing, empty, not loadable, another
    model), or, without a path, why the model cannot be built here; None if nothing is
    wrong: checked before a long evaluation or render starts on it."""
    if path is not None and (problem := _foreign_link_problem(path)):  # one's own links are followed
        return f"--model {path}: {problem}"
    if path is not None and (problem := _model_size_problem(path)):  # MuJoCo would read it whole
        return f"--model {path}: {problem}"
    # checks loads numpy and the task: kept off the CLI's start path (`sacscale --help` must run
    # where only the project itself is installed, as the environment's post-deploy script does)
    from sacscale.checks import InputError, check_model

    try:
        check_model(path)
    except InputError as exc:
        return str(exc)
    return None


def _model_size_problem(path: str) -> str | None:
    try:
        found = os.stat(path)
    except OSError:
        return None  # named by check_model
    return size_problem(found.st_size, "model") if stat.S_ISREG(found.st_mode) else None


def repository_hint(default: str) -> str:
    """For an option whose default is a path relative to the repository root: a hint when
    the command runs somewhere else (no Snakefile here), else nothing."""
    if Path("Snakefile").is_file():
        return ""
    return (f" (the default {default} is relative to the repository root, the directory with the Snakefile; "
            f"run there or pass the path)")


def png_path(text: str) -> str:
    """An argparse type for a figure's file: the figures are PNG, and a name matplotlib would
    read as another format (or none) failed only once the work was done."""
    if Path(text).suffix.lower() != ".png":
        raise argparse.ArgumentTypeError(f"{text!r}: a figure is written as PNG; give a file name ending in .png")
    return text


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether two names are one file (or one directory): links and `..` resolved."""
    return os.path.realpath(a) == os.path.realpath(b)


def refuse_one_file(*outputs: tuple[str, str | os.PathLike | None]) -> None:
    """BadInput when two of a command's outputs, (option, path) each, are one file (links and
    `..` resolved): the one written second replaced the first and the command still said it
    wrote both (`verify-env --output X --diff-output X` left a record naming itself as the
    patch to apply). Outputs not given (None) are skipped."""
    given = [(option, path) for option, path in outputs if path]
    for i, (option, path) in enumerate(given):
        for other, later in given[i + 1:]:
            if same_file(path, later):
                raise BadInput(f"{option} and {other} are one file ({path}): the second would replace the first")


def refuse_output_on_input(outputs: list[tuple[str, str | os.PathLike | None]],
                           inputs: list[tuple[str, str | os.PathLike | list | None]]) -> None:
    """BadInput when one of a command's outputs, (option, path) each, is one of its input
    files (option, a path or a list of them), links and `..` resolved: the output made from
    the input replaced it (`report --output-html s.json` with `--summary s.json` left the
    summary an HTML page, exit 0). Options not given (None) are skipped."""
    for option, output in outputs:
        for name, given in inputs:
            paths = given if isinstance(given, (list, tuple)) else [given]
            first = next((p for p in paths if output and p and same_file(p, output)), None)
            if first is not None:
                raise BadInput(f"{option} {output}: is the {name} {first}, an input; write it elsewhere")


def refuse_output_inside(option: str, output: str | os.PathLike | None, folder: str | os.PathLike,
                         allowed: tuple[str, ...] = ()) -> None:
    """BadInput when `output` would be written inside `folder`, evidence this command reads
    (`verify S --output S/MANIFEST.sha256` replaced the manifest with the verdict and passed;
    `analyze-run R --output R/run.json` replaced the run's record), except at the names in
    `allowed` (relative to `folder`) that the pipeline itself writes there. Links and `..`
    are resolved first."""
    if not output:
        return
    out, root = Path(os.path.realpath(output)), Path(os.path.realpath(folder))
    if out.is_relative_to(root) and out.relative_to(root).as_posix() not in allowed:
        where = f" other than {', '.join(allowed)}" if allowed else ""
        raise BadInput(f"{option} {output}: inside {folder}{where}, whose files this command reads as evidence; "
                       "write it elsewhere")


def refuse_output_beside(option: str, output: str | os.PathLike | None, inputs: list[str], what: str) -> None:
    """BadInput when `output` would be written in the folder of one of the `inputs` files,
    a folder this command reads `what` from: a record written among the evaluations was
    taken as one more by the next `--evaluations eval/*.json`."""
    if not output:
        return
    folder = Path(os.path.realpath(output)).parent
    for given in inputs:
        if Path(os.path.realpath(given)).parent == folder:
            raise BadInput(f"{option} {output}: beside the {what} {given}, in the folder this command reads "
                           f"{what}s from; write it elsewhere")


# A run set's folder holds its manifest (verify re-hashes every file it lists and names any
# other as extra) or, before the manifest is made, the plan the pipeline wrote first.
RUN_SET_MARKERS = ("MANIFEST.sha256", "plan.json")
# an input of a set lies at most this deep in it: runs/<run>/run.json
_SET_DEPTH = 3


def run_set_of(path: str | os.PathLike) -> tuple[Path, str] | None:
    """The run set folder that holds `path` (a file or folder it reads), and the marker it
    was known by: the nearest folder at most three levels up with a manifest or a plan."""
    real = Path(os.path.realpath(path))
    for folder in [real, *real.parents][:_SET_DEPTH + 1]:
        marker = next((m for m in RUN_SET_MARKERS if (folder / m).is_file()), None)
        if marker:
            return folder, marker
    return None


def refuse_output_in_run_sets(outputs: list[tuple[str, str | os.PathLike | None]],
                              inputs: list[str | os.PathLike | list | None]) -> None:
    """BadInput when an output, (option, path) each, lies in a run set folder one of the
    inputs (a path or a list of them) comes from: a file added there fails the set's
    verification (`report --output-md S/metrics/report.md` left `verify S` with 10 problems)
    and one written over is evidence lost. Links and `..` are resolved first."""
    paths = [p for given in inputs for p in (given if isinstance(given, (list, tuple)) else [given]) if p]
    sets = dict(found for found in map(run_set_of, paths) if found)
    for option, output in outputs:
        if not output:
            continue
        out = Path(os.path.realpath(output))
        for folder, marker in sets.items():
            if out.is_relative_to(folder):
                raise BadInput(f"{option} {output}: inside the run set {folder} (it holds {marker}), whose "
                               "evidence this command reads; a file added there fails its verification: "
                               "write it outside the set")


def refuse_unwritable_outputs(outputs: list[tuple[str, str | os.PathLike, bool]]) -> None:
    """BadInput, before any work, when an output, (option, path, whether it is a folder the
    command fills) each, could not be written where it is named: another output made at or
    inside a file output, a folder where a file goes (or the reverse), a file on the way, a
    folder this user may not write in. `prepare-model --json FOLDER` built and saved the
    model, then refused the summary, the model and its folder left behind."""
    for option, path, folder in outputs:
        for other, inner, _ in outputs:
            if not folder and other != option and Path(os.path.realpath(inner)).is_relative_to(os.path.realpath(path)):
                raise BadInput(f"{option} {path}: {other} {inner} is there or inside it, so this cannot be "
                               "a file; give each output a name of its own")
    for option, path, folder in outputs:
        problem = _output_problem(Path(path), folder)
        if problem:
            raise BadInput(f"{option} {path}: {problem}")


def _output_problem(path: Path, folder: bool) -> str | None:
    kind = file_kind(path)
    if kind is not None and kind != ("a folder" if folder else "a plain file"):
        return f"is {kind}, not {'a folder' if folder else 'a file'}"
    holder = path if folder and kind else path.parent
    existing = next(f for f in (holder, *holder.parents) if file_kind(f) is not None)
    if file_kind(existing) != "a folder":
        return f"{existing} on its way is {file_kind(existing)}, not a folder"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"{existing}: {'read-only file system' if _read_only(existing) else 'permission denied'}"
    return None


def _read_only(folder: Path) -> bool:
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def float_in(low: float, high: float, what: str):
    """An argparse type for a finite number with bounds, `what` saying what the top one is:
    1e308 seconds passed finite_float and overflowed where it became a step count."""
    def bounded(text: str) -> float:
        value = finite_float(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text[:40]!r}: must be {low:g}..{high:g} ({what})")
        return value

    return bounded
