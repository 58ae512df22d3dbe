"""A folder an output would make on its way, named as a lock file or as record-run's work
folder. Before: the rule looked at an output's last name only, and the write then made the
folders on the way: `--output DIR/.x.lock/v.webp` made a folder at the lock name of `DIR/x`,
and every later command locking `x` failed (`cannot open it (Is a directory)`); an output into
a set's `runs/.<run>.partial/` after that run had completed left a folder of record-run's
work-folder form there. Now any part that would be made at such a name is refused (any
command's output, a folder the command holds, an atomic write, record-run's four folders),
in one line naming the option and the part, exit 2, nothing made; a folder already there is
the user's to write into. So are a blank value and a path too long to open, whose refusal
named no option (record-run) or was a traceback (`evaluate --output`)."""

import errno
import subprocess
import sys

import pytest
from cli_runs import REPO, SET, one_line, sacscale

from sacscale.atomic import write_json
from sacscale.commands import BadInput
from sacscale.commands._output_lock import holding_outputs
from sacscale.locks import lock_beside

RUN = REPO / "results" / SET / "runs" / "shared_r1_n1_pool7"
LOCK_MADE = "is named as a sacscale lock file: a folder there blocks that lock"
WORK_MADE = "is named as record-run's work folder of a run (.<run>.partial), which only record-run makes"


def _record_run(tmp_path, **folders):
    given = {"--run-dir": tmp_path / "R", "--work-dir": tmp_path / ".R.partial", "--attic": tmp_path / "att",
             **{f"--{key.replace('_', '-')}": value for key, value in folders.items()}}
    argv = [str(arg) for pair in given.items() for arg in pair]
    return subprocess.run([sys.executable, "-m", "sacscale.cli", "record-run", *argv, "--timeout", "10", "--", "true"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)


@pytest.mark.parametrize("folder", [".x.lock", ".x.trainer-lock", "sacscale-training.lock"])
def test_an_output_that_would_make_a_folder_at_a_lock_name_is_refused(tmp_path, folder):
    made = tmp_path / "lk" / folder
    one_line(sacscale("analyze-run", RUN, "--output", made / "v.json"),
             f"error: argument --output: {made / 'v.json'}: {made} would be made on the way, and {folder} {LOCK_MADE}")
    assert list(tmp_path.iterdir()) == []
    if folder == ".x.lock":
        with lock_beside(tmp_path / "lk" / "x"):  # the lock of `x` is still a lock anyone can take
            pass


def test_a_folder_made_at_a_lock_name_through_dot_dot_is_refused(tmp_path):
    one_line(sacscale("analyze-run", RUN, "--output", tmp_path / ".x.lock" / ".." / "v.json"),
             f"{tmp_path / '.x.lock'} would be made on the way, and .x.lock {LOCK_MADE}")
    assert list(tmp_path.iterdir()) == []


def test_a_folder_output_that_would_make_a_lock_named_folder_is_refused(tmp_path):
    one_line(sacscale("prepare-model", "--output-dir", tmp_path / ".W.lock" / "m", "--steps", "1"),
             f"error: argument --output-dir: {tmp_path / '.W.lock' / 'm'}: {tmp_path / '.W.lock'} would be made")
    assert list(tmp_path.iterdir()) == []


def test_a_folder_of_the_users_own_named_so_is_written_into(tmp_path):
    (tmp_path / ".x.lock").mkdir()
    done = sacscale("analyze-run", RUN, "--output", tmp_path / ".x.lock" / "v.json")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / ".x.lock" / "v.json").is_file()


def test_holding_outputs_and_an_atomic_write_make_no_lock_named_folder(tmp_path):
    venv = tmp_path / ".v.lock" / "venv"  # reference-env's --python folder
    with pytest.raises(BadInput, match=rf"^--python {venv}: {tmp_path / '.v.lock'} would be made on the way"):
        with holding_outputs(folders=(("--python", venv),)):
            pass
    with pytest.raises(OSError) as raised:
        write_json(tmp_path / ".x.lock" / "a.json", {"a": 1})
    assert raised.value.errno == errno.EINVAL
    assert list(tmp_path.iterdir()) == []


def test_an_output_that_would_make_a_work_folder_of_record_runs_is_refused(tmp_path):
    work = tmp_path / "runs" / ".r2.partial"
    one_line(sacscale("analyze-run", RUN, "--output", work / "tb" / "x.json"),
             f"error: argument --output: {work / 'tb' / 'x.json'}: {work} would be made, and .r2.partial {WORK_MADE}")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("option", ["run_dir", "work_dir", "attic", "state_dir"])
def test_a_record_run_folder_that_would_make_a_lock_named_folder_is_refused(tmp_path, option):
    given = tmp_path / ".x.lock" / "d"
    one_line(_record_run(tmp_path, **{option: given}),
             f"error: argument --{option.replace('_', '-')}: {given}: {tmp_path / '.x.lock'} would be made on the way")
    assert list(tmp_path.iterdir()) == []


def test_record_runs_attic_may_not_make_a_work_folder_but_its_work_folder_is_one(tmp_path):
    one_line(_record_run(tmp_path, attic=tmp_path / ".a.partial" / "att"),
             f"error: argument --attic: {tmp_path / '.a.partial' / 'att'}: {tmp_path / '.a.partial'} would be made")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("value", [" ", "\t ", "  "])
def test_a_blank_record_run_folder_is_refused_as_an_empty_one_is(tmp_path, value):
    one_line(_record_run(tmp_path, attic=value),
             f"sacscale record-run: error: argument --attic: a blank value {value!r} (whitespace only: an unset "
             "variable and a space?); give one")
    assert list(tmp_path.iterdir()) == []


def test_a_blank_output_is_refused(tmp_path):
    one_line(sacscale("analyze-run", RUN, "--output", " ", cwd=tmp_path),
             "sacscale analyze-run: error: argument --output: a blank value ' ' (whitespace only: an unset variable "
             "and a space?); give a name")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("parts", "size"), [(["a" * 300], 300), (["b" * 200] * 25, 200)])
def test_a_path_too_long_is_refused_naming_the_option_and_shortened(tmp_path, parts, size):
    long = tmp_path.joinpath(*parts)
    for done, option in ((_record_run(tmp_path, run_dir=long), "--run-dir"),
                         (sacscale("evaluate", RUN, "--output", long), "--output")):  # was a traceback
        one_line(done, f"error: argument {option}: {str(long)[:160]!r}... ({len(str(long)) - 160:,} more characters) "
                       f"is longer than a path can be (255 bytes a name, 4,095 in all; its longest name is "
                       f"{size} bytes")
        assert len(done.stderr) < 500
    assert list(tmp_path.iterdir()) == []
