"""`sacscale record-run` checks its folders before anything is moved or started: an attic
inside (or equal to) the work or run folder, or one that cannot be made, had a failed
attempt and its log deleted, and the last line said they were "kept in None"; a work or run
folder that is, or holds, the current directory (`.`, `/`) was stopped only by the kernel;
a learning-state folder inside the run folder trained the whole run, then failed the rename
onto the run folder its move had made, the run left in two places.
Each is refused in one line naming the option, exit status 2, with nothing moved or run."""

import sys

import pytest

from cli_runs import one_line, sacscale


def record_run(cwd, run_dir="run", work_dir="wk", attic="at", state_dir=None):
    marker = cwd / "ran"
    state = () if state_dir is None else ("--state-dir", state_dir)
    return sacscale("record-run", "--run-dir", run_dir, "--work-dir", work_dir, "--attic", attic, *state,
                    "--timeout", "30", "--", sys.executable, "-c", f"open({str(marker)!r}, 'w'); raise SystemExit(3)",
                    cwd=cwd)


def assert_untouched(cwd, before):
    assert sorted(p.name for p in cwd.iterdir()) == before
    assert not (cwd / "ran").exists()


@pytest.mark.parametrize(("attic", "inside"), [("wk/at", "--work-dir wk"), ("wk", "--work-dir wk"),
                                               ("run/old", "--run-dir run"), ("run", "--run-dir run")])
def test_an_attic_inside_the_work_or_run_folder_is_refused(tmp_path, attic, inside):
    (tmp_path / "wk").mkdir()
    (tmp_path / "wk" / "train.log").write_text("an earlier attempt's log")
    one_line(record_run(tmp_path, attic=attic), f"--attic {attic}: is or lies inside {inside}")
    assert_untouched(tmp_path, ["wk"])
    assert (tmp_path / "wk" / "train.log").read_text() == "an earlier attempt's log"


@pytest.mark.parametrize("attic", ["a-file/at", "/proc/no-attic-here"])
def test_an_attic_that_cannot_be_made_is_refused_before_the_run(tmp_path, attic):
    (tmp_path / "a-file").write_text("in the way")
    (tmp_path / "wk").mkdir()
    (tmp_path / "wk" / "train.log").write_text("an earlier attempt's log")
    one_line(record_run(tmp_path, attic=attic), f"--attic {attic}: cannot be made")
    assert_untouched(tmp_path, ["a-file", "wk"])
    assert (tmp_path / "wk" / "train.log").exists()


@pytest.mark.parametrize(("option", "value"), [("work_dir", "."), ("work_dir", "/"), ("run_dir", "."),
                                               ("run_dir", "..")])
def test_a_folder_holding_the_current_directory_is_refused(tmp_path, option, value):
    (tmp_path / "here").mkdir()
    done = record_run(tmp_path / "here", **{option: value})
    one_line(done, f"--{option.replace('_', '-')} {value}: is or holds the current directory")
    assert_untouched(tmp_path / "here", [])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["here"]


@pytest.mark.parametrize(("run_dir", "work_dir"), [("same", "same"), ("run", "run/wk"), ("wk/run", "wk")])
def test_a_work_folder_that_is_or_holds_the_run_folder_is_refused(tmp_path, run_dir, work_dir):
    one_line(record_run(tmp_path, run_dir=run_dir, work_dir=work_dir), "one is or holds the other")
    assert_untouched(tmp_path, [])


def test_the_attic_is_made_at_the_start_and_keeps_the_failed_attempt(tmp_path):
    done = record_run(tmp_path, attic="logs/attempts")
    assert done.returncode == 3, done.stderr
    (kept,) = (tmp_path / "logs" / "attempts").iterdir()
    assert (kept / "train.log").exists() and "kept in None" not in done.stderr


@pytest.mark.parametrize(("state_dir", "other"), [("run/state", "--run-dir run"), ("wk/state", "--work-dir wk"),
                                                  ("at/state", "--attic at"), ("run", "--run-dir run"),
                                                  (".", "--work-dir wk"), ("sub/../run/x", "--run-dir run")])
def test_a_state_folder_overlapping_another_folder_is_refused(tmp_path, state_dir, other):
    (tmp_path / "sub").mkdir()
    done = record_run(tmp_path, state_dir=state_dir)
    one_line(done, f"--state-dir {state_dir}: is, holds or lies inside {other}; the learning state is moved there")
    assert_untouched(tmp_path, ["sub"])


def test_a_state_folder_beside_the_others_is_accepted(tmp_path):
    done = record_run(tmp_path, state_dir="state")
    assert done.returncode == 3, done.stderr
    assert (tmp_path / "ran").exists()


@pytest.mark.parametrize("state_dir", ["a-file/state", "a-file", "/proc/no-state-here"])
def test_a_state_folder_that_cannot_be_made_is_refused_before_the_run(tmp_path, state_dir):
    """Before: the run trained to its end, then failed setting its learning state aside
    (`Not a directory`), the whole training lost to a path the wrapper could check first."""
    (tmp_path / "a-file").write_text("in the way")
    done = record_run(tmp_path, state_dir=state_dir)
    one_line(done, f"sacscale record-run: --state-dir {state_dir}: cannot be made (")
    assert done.stderr.strip().endswith("; a completed run's learning state is moved there after it trains "
                                        "(nothing was moved or started)")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "at"]  # the attic, made first
    assert not (tmp_path / "ran").exists()


def test_the_state_folder_is_made_before_the_run(tmp_path):
    done = record_run(tmp_path, state_dir="logs/state")
    assert done.returncode == 3, done.stderr
    assert (tmp_path / "logs" / "state").is_dir() and not any((tmp_path / "logs" / "state").iterdir())
