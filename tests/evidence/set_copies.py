"""A committed run set copied into a temporary tree of the repository's layout (results/S
and reports/S side by side), for tests that change a set and verify it."""

import atexit
import json
import shutil
import struct
import tempfile
from pathlib import Path

from sacscale.evidence import manifest
from sacscale.evidence.eval_protocol import unrecorded_evaluation
from sacscale.report.build import write_report
from sacscale.report.page_format import PAGE_FORMAT
from sacscale.report.set_inputs import set_inputs

REPO = Path(__file__).resolve().parents[2]


def copy_committed_set(tmp_path: Path, name: str) -> Path:
    """results/NAME and reports/NAME under tmp_path/repo; returns the copy's results/NAME."""
    for sub in ("results", "reports"):
        shutil.copytree(REPO / sub / name, tmp_path / "repo" / sub / name)
    return tmp_path / "repo" / "results" / name


def unpacked_checkout(tmp_path: Path, name: str) -> Path:
    """A folder laid out as an unpacked copy of the project (no git: every set folder counts)
    holding the committed set NAME and what the status table reads beside it."""
    (tmp_path / "workflow").mkdir()
    shutil.copy(REPO / "workflow" / "presets.yaml", tmp_path / "workflow")
    shutil.copy(REPO / "pyproject.toml", tmp_path)
    shutil.copytree(REPO / "results" / name, tmp_path / "results" / name)
    return tmp_path


def report_file(root: Path, name: str) -> Path:
    """reports/S/NAME beside results/S."""
    return root.parent.parent / "reports" / root.name / name


def edit_text(path: Path, old: str, new: str) -> None:
    """Replace the first `old` in the file; the test fails if it is not there."""
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def made_current(root: Path) -> Path:
    """The copy `root` as a set made by this code: its evidence.json records this code's
    page format, its plan (plan.json and environment.json's copy) records the evaluation's
    size as planning now does, its manifest is made again, and its report is written again by
    this report stage (in the pipeline's order: manifest, then report). Returns root."""
    record_evaluation_size(root)
    scope_file = root / "evidence.json"
    scope = json.loads(scope_file.read_text())
    scope_file.write_text(json.dumps({**scope, "report_page": PAGE_FORMAT}))
    remake_manifest(root)
    reports = root.parent.parent / "reports" / root.name
    write_report(output_md=reports / "report.md", output_html=reports / "report.html", figures_dir=reports / "figures",
                 **set_inputs(root, reports))
    return root


_CURRENT_SETS: dict[str, Path] = {}  # a set's made-current copy, made once per test process


def current_copy(tmp_path: Path, name: str) -> Path:
    """What `made_current(copy_committed_set(tmp_path, name))` gives, copied from one made
    once per test process (its manifest and report take seconds to make again)."""
    if name not in _CURRENT_SETS:
        cache = Path(tempfile.mkdtemp(prefix="current-sets-"))
        atexit.register(shutil.rmtree, cache, True)
        _CURRENT_SETS[name] = made_current(copy_committed_set(cache, name)).parent.parent
    for sub in ("results", "reports"):
        shutil.copytree(_CURRENT_SETS[name] / sub / name, tmp_path / "repo" / sub / name, symlinks=True)
    return tmp_path / "repo" / "results" / name


def record_evaluation_size(root: Path) -> None:
    """plan.json and environment.json's plan with `evaluation`, as planning now records it:
    on (the set has its evaluations) and the size they ran with (the default of its time, by
    its device)."""
    plan = json.loads((root / "plan.json").read_text())
    if "evaluation" in plan:
        return
    size = unrecorded_evaluation(plan)
    assert size is not None, "the plan's run configurations name no device"
    evaluation = {"enabled": True, **size}
    (root / "plan.json").write_text(json.dumps({**plan, "evaluation": evaluation}, indent=1))
    edit_record(root, "environment.json", lambda env: env["plan"].update(evaluation=evaluation))


def remake_manifest(root: Path) -> None:
    """MANIFEST.sha256 and manifest.json made again over the set as it now is, by the library
    as a forger could: `sacscale manifest` refuses a planned set with an output missing, which
    some of these copies lack on purpose for verify to name."""
    manifest.write(root, root / "MANIFEST.sha256", root / "manifest.json")


def event_records(path: Path) -> list:
    """The events of an uncompressed event file, one per TFRecord (length, its CRC, the
    event, its CRC), for tests that rewrite a run's own events."""
    from tensorboard.compat.proto import event_pb2

    data, events, at = path.read_bytes(), [], 0
    while at < len(data):
        (length,) = struct.unpack("<Q", data[at:at + 8])
        events.append(event_pb2.Event.FromString(data[at + 12:at + 12 + length]))
        at += 12 + length + 4
    return events


def edit_record(root: Path, rel: str, edit) -> None:
    """The JSON record at root/rel changed in place by `edit(record)`."""
    record = json.loads((root / rel).read_text())
    edit(record)
    (root / rel).write_text(json.dumps(record, indent=1))


def records_after_edit(tmp_path: Path, rel: str, edit, name: str) -> list[str]:
    """verify's record problems for a copy of the committed set `name` whose record rel was
    changed by `edit` and its manifest made again (the page is not written again)."""
    from sacscale.evidence.verify import verify

    root = copy_committed_set(tmp_path, name)
    edit_record(root, rel, edit)
    remake_manifest(root)
    return verify(root).records


def assert_named(records: list[str], *says: str) -> None:
    """Each of `says` begins one of the problems."""
    for text in says:
        assert any(p.startswith(text) for p in records), (text, records)
