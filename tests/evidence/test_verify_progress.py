"""verify says on stderr which stage it is in (a committed set takes many seconds on a loaded
machine, which looked like a hang): one line as each stage starts, on a terminal by default,
anywhere with --progress, never with --quiet; stdout, the verdict, stays as it was."""

import io
import sys

from set_copies import copy_committed_set

from sacscale import usage
from sacscale.cli import main

SET = "h200x1_shared_short"
PREFIX = "sacscale verify: "


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _verify(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["verify", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_stage_lines_on_stderr_and_the_verdict_unchanged(tmp_path, capsys):
    # a newline and an escape sequence in a folder above the set: its lines show them escaped
    parent = tmp_path / "odd\nsacscale verify: done\x1b[2K"
    parent.mkdir()
    root = copy_committed_set(parent, SET)
    code, quiet_out, quiet_err = _verify(capsys, str(root))
    assert code == 0 and quiet_err == "", quiet_err  # stderr no terminal: as before
    code, out, err = _verify(capsys, str(root), "--progress")
    assert code == 0 and out == quiet_out, (out, quiet_out)
    lines = err.splitlines()
    assert all(line.startswith(PREFIX) for line in lines), err
    stages = [line.removeprefix(PREFIX) for line in lines]
    shown = str(root).replace("\n", "\\n").replace("\x1b", "\\x1b")
    runs = len(list((root / "runs").iterdir()))
    files = len((root / "MANIFEST.sha256").read_text().splitlines())
    for expected in ("loading the checks' code (pandas, scipy)",
                     f"hashing {files} files (",
                     f"recomputing the metrics of {runs} runs from their events",
                     "cross-checking the runs' records against plan.json",
                     f"checking that the event files of {runs} runs are their own",
                     "recomputing summary.json and summary.csv from the metrics",
                     "checking the report's numbers in "):
        assert any(stage.startswith(expected) for stage in stages), (expected, err)
    assert f"against {shown}/MANIFEST.sha256" in err and "\x1b" not in err and "odd\n" not in err, err


def test_a_terminal_sees_them_and_quiet_silences_them(tmp_path, capsys, monkeypatch):
    root = copy_committed_set(tmp_path, SET)
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["verify", str(root), "--no-metrics"]) == 0
    listed = [line.split("  ", 1)[1] for line in (root / "MANIFEST.sha256").read_text().splitlines()]
    size = sum((root / rel).stat().st_size for rel in listed)
    # --no-metrics recomputes nothing: two stages
    assert terminal.getvalue().splitlines() == [
        f"{PREFIX}loading the checks' code (pandas, scipy)",
        f"{PREFIX}hashing {len(listed)} files ({size:,} bytes) against {root}/MANIFEST.sha256"]
    terminal.seek(0), terminal.truncate()
    assert main(["verify", str(root), "--no-metrics", "--quiet"]) == 0
    assert terminal.getvalue() == ""
    assert capsys.readouterr().out.splitlines()[-1].startswith("verified ")


def test_quiet_and_progress_do_not_go_together(tmp_path, capsys):
    root = copy_committed_set(tmp_path, SET)
    code = None
    try:
        main(["verify", str(root), "--quiet", "--progress"])
    except SystemExit as exc:
        code = exc.code
    assert code == 2
    assert "--progress: not allowed with argument --quiet" in capsys.readouterr().err


def test_a_count_within_a_stage_at_most_every_second(monkeypatch, capsys):
    clock = iter([0.0, 0.0, 0.4, 1.2, 1.5, 2.0, 3.1, 3.2, 3.3])
    monkeypatch.setattr(usage.time, "monotonic", lambda: next(clock))
    lines = usage.StageLines("sacscale verify", shown=True)  # 0.0
    lines.stage("recomputing the metrics of 5 runs")  # 0.0
    for done in range(1, 6):  # at 0.4, 1.2 (said; the line's time 1.5), 2.0, 3.1 (said; 3.2), 3.3
        lines.item(f"run {done}/5")
    assert capsys.readouterr().err.splitlines() == [
        "sacscale verify: recomputing the metrics of 5 runs", "sacscale verify: run 2/5", "sacscale verify: run 4/5"]
