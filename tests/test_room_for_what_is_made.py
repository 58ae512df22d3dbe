"""An output's path that fits the file system's bounds itself, but not what the command makes
from it. Before: the check judged the path as given; `aggregate --csv A --json LONG` wrote
A, then failed at --json's temporary file beside it; `train --log-dir LONG` failed at
train_meta.json in it, `report --output-dir LONG` at its staging folder beside it, each in a
line thousands of characters long naming no option; record-run with a --state-dir too long
for the learning state trained the whole run, then moved the completed run to the attic as
failed. Now each is refused naming the option, the path shortened, before anything is
written or started. So is a part of a path the write would make that is blank or shows as
nothing (`DIR/$UNSET /e.json` made a folder named ` `)."""

import errno
import os
import subprocess
import sys

import pytest
from cli_runs import REPO, SET, one_line, sacscale

from sacscale.cli import _error_line
from sacscale.pipeline.folder_options import blank_part_problem
from sacscale.pipeline.made_room import output_room, run_folder_room

RUN = REPO / "results" / SET / "runs" / "shared_r1_n1_pool7"
METRICS = REPO / "results" / SET / "metrics" / "shared_r1_n1_pool7.json"
TOO_LONG = "bytes long, too long for"


def long_path(tmp_path, total: int, name: str = "") -> str:
    """A path under tmp_path of `total` bytes, of folders' names of at most 250 bytes, ending in `name`."""
    path, letters, tail = str(tmp_path), iter("defghijklmnopqrs"), f"/{name}" if name else ""
    while len(path) + 252 + len(tail) < total:
        path += "/" + next(letters) * 250
    return path + "/" + "z" * (total - len(path) - 1 - len(tail)) + tail


def room_of(command, option, value, folder):
    return output_room(command, option, value, folder)[0]


def test_a_second_output_too_long_for_its_temporary_is_refused_before_the_first_is_written(tmp_path):
    json_out = long_path(tmp_path, 4095 - room_of("aggregate", "--json", "a.json", False) + 1, "a.json")
    done = sacscale("aggregate", METRICS, "--csv", tmp_path / "a.csv", "--json", json_out)
    one_line(done, f"error: argument --json: {json_out[:160]!r}... ")
    assert TOO_LONG in done.stderr and "the temporary file written beside it" in done.stderr
    assert len(done.stderr) < 600
    assert list(tmp_path.iterdir()) == []  # --csv not written either


def test_a_path_with_room_for_what_is_made_is_taken(tmp_path):
    fits = long_path(tmp_path, 4095 - room_of("aggregate", "--json", "a.json", False), "a.json")
    done = sacscale("aggregate", METRICS, "--csv", tmp_path / "a.csv", "--json", fits)
    assert done.returncode == 0, done.stderr
    assert os.path.isfile(fits)


def test_a_run_folder_too_long_for_its_event_files_is_refused_naming_log_dir(tmp_path):
    log_dir = long_path(tmp_path, 4095 - run_folder_room()[0] + 1)
    done = sacscale("train", "--iterations", "1", "--num-envs", "8", "--log-dir", log_dir, cwd=tmp_path)
    one_line(done, f"error: argument --log-dir: {log_dir[:160]!r}... ")
    assert TOO_LONG in done.stderr and "the files made inside it" in done.stderr and len(done.stderr) < 600
    assert list(tmp_path.iterdir()) == []


def test_a_report_folder_too_long_for_its_staging_folder_is_refused_naming_output_dir(tmp_path):
    out = long_path(tmp_path, 4095 - room_of("report", "--output-dir", "x", True) + 1)
    done = sacscale("report", "--run-set", REPO / "results" / SET, "--output-dir", out)
    one_line(done, f"error: argument --output-dir: {out[:160]!r}... ")
    assert "the staging folder made beside it" in done.stderr and len(done.stderr) < 600
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("option", ["--state-dir", "--attic", "--run-dir", "--work-dir"])
def test_a_record_run_folder_too_long_for_the_runs_names_is_refused_before_the_trainer_starts(tmp_path, option):
    folders = {"--run-dir": "runs/r2", "--work-dir": "runs/.r2.partial", "--attic": "attic", "--state-dir": "st"}
    folders[option] = long_path(tmp_path, 4040, ".r2.partial" if option == "--work-dir" else "")
    argv = [str(arg) for pair in folders.items() for arg in pair]
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", "record-run", *argv, "--timeout", "60", "--",
                           "touch", str(tmp_path / "started")], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert f"{option}: " in done.stderr and TOO_LONG in done.stderr, done.stderr
    assert len(done.stderr) < 1000 and "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []  # not started, nothing made


def test_a_name_too_long_to_open_is_shortened_in_the_error_line(capsys):
    long = "/tmp/" + "/".join(["x" * 250] * 17)
    assert _error_line("aggregate", OSError(errno.ENAMETOOLONG, "File name too long", long)) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"sacscale aggregate: error: {long[:160]!r}... (") and len(err) < 400, err


# Hangul fillers (Lo) and the blank braille pattern (So) are drawn as an empty cell; combining
# marks (Mn, Me) alone have nothing to sit on
@pytest.mark.parametrize("blank", [" ", "\t", "\u00a0", "\u200b", " \u00a0", "\u3164", "\u2800", "\u115f",
                                   "\u1160", "\uffa0", "\u0301\u0301", "\u20dd"])
def test_a_blank_part_the_write_would_make_is_refused(tmp_path, blank):
    out = tmp_path / "b" / blank / "e.json"
    one_line(sacscale("analyze-run", RUN, "--output", out),
             f"error: argument --output: {str(out)!r}: its part {ascii(blank)} would be made, and that name is blank")
    assert list(tmp_path.iterdir()) == []


# unassigned code points (Cn: U+2065 and U+FFF0 of the default-ignorable ranges) have no glyph;
# the musical null notehead (So) is drawn as nothing
@pytest.mark.parametrize("blank", ["\u2065", "\u1cbc", "\ufff0", "\U000e0080", "\U0001d159", " \u2065"])
def test_a_part_of_unassigned_or_blank_drawn_characters_is_blank(tmp_path, blank):
    problem = blank_part_problem(str(tmp_path / blank / "e.json"))
    assert problem is not None and f"its part {ascii(blank)} would be made, and that name is blank" in problem


@pytest.mark.parametrize("name", ["e\u0301", "\u3164a", "\u3131", "\u2801", "\u0915\u094d"])
def test_a_name_that_shows_a_letter_is_not_blank(tmp_path, name):
    # a mark on a letter, a filler beside one, a Hangul letter, a braille dot, a Devanagari conjunct
    assert blank_part_problem(str(tmp_path / name / "e.json")) is None


@pytest.mark.parametrize("blank", [" ", "\u3164"])
def test_a_blank_named_folder_of_the_users_own_is_written_into(tmp_path, blank):
    (tmp_path / blank).mkdir()
    done = sacscale("analyze-run", RUN, "--output", tmp_path / blank / "e.json")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / blank / "e.json").is_file()


def test_a_blank_part_of_a_record_run_folder_is_refused(tmp_path):
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", "record-run", "--run-dir", "R", "--work-dir",
                           ".R.partial", "--attic", "x/\u00a0/att", "--timeout", "10", "--", "true"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    one_line(done, "argument --attic: 'x/\\xa0/att': its part '\\xa0' would be made, and that name is blank")
    assert list(tmp_path.iterdir()) == []


def _named_report(out: str, md: str = "report.md", html: str = "report.html"):
    """The report in the pipeline's own form, into the folder `out`."""
    return sacscale("report", "--summary", REPO / "results" / SET / "summary.json", "--metrics", METRICS,
                    "--output-md", f"{out}/{md}", "--output-html", f"{out}/{html}", "--figures-dir", f"{out}/figures")



# the longest temporary's name for `<stem><suffix>`, as sacscale.atomic makes it: the largest pid and thread id
def _temporary(stem: str, suffix: str) -> str:
    return f".{stem}.tmp{2 ** 22}.{2 ** 64}{suffix}"


# what the report stages in `.<folder>.report-<8 letters>/`, beside its folder, for each output
STAGED = {"--figures-dir": ("figures", "figures/" + _temporary("throughput_by_repeat", ".png")),
          "--output-md": ("m" * 200 + ".md", _temporary("m" * 200, ".md")),
          "--output-html": ("h" * 200 + ".html", _temporary("h" * 200, ".html"))}


def _folder_bound(option: str) -> int:
    """The longest report folder whose staged path for `option` (its staging folder's name
    is the folder's, 17 bytes longer) fits in 4,095 bytes."""
    return 4095 - len("..report-12345678/") - len(STAGED[option][1])


@pytest.mark.parametrize("option", list(STAGED))
def test_each_report_output_too_long_for_its_staged_files_is_refused_naming_it(tmp_path, option):
    """The pipeline's form (--output-md/--output-html/--figures-dir) is staged beside the
    report's folder as --output-dir is: it passed the checks, drew, then failed with `File
    name too long` naming no option."""
    name = STAGED[option][0]
    out = long_path(tmp_path, _folder_bound(option) + 1)
    done = _named_report(out, **{"--output-md": {"md": name}, "--output-html": {"html": name}}.get(option, {}))
    one_line(done, f"error: argument {option}: {f'{out}/{name}'[:160]!r}... ")
    assert "the files staged in the report's staging folder" in done.stderr and len(done.stderr) < 600
    assert list(tmp_path.iterdir()) == []


def test_a_report_folder_with_room_for_its_staged_files_is_written(tmp_path):
    out = long_path(tmp_path, _folder_bound("--figures-dir"))
    done = _named_report(out)
    assert done.returncode == 0, done.stderr
    assert os.path.isfile(f"{out}/figures/throughput_by_repeat.png") and os.path.isfile(f"{out}/report.html")
