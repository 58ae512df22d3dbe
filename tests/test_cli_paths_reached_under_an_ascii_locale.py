"""A path that reaches a non-ASCII name only as the command opens it, under a C locale with
UTF-8 mode and locale coercion off (the file-system encoding is then ASCII): an ASCII
relative argument given in a non-ASCII working folder, an ASCII path through a link to a
non-ASCII folder, and the lock-folder settings. Before: verify of a legitimate set failed
(rc 1) under the wrong causes ("a path that is not UTF-8 ...; rename the folder", MuJoCo's
TypeError), and a lock folder setting was said to hold "a control or invisible character"
with no cure. Now the argument or setting, the path the encoding cannot hold and the cure
are named in one line, exit 2, before anything is read or made."""

import os
import subprocess
import sys

import pytest

from tests.cli_runs import record_run_with_machine_lock
from tests.evidence.set_copies import copy_committed_set
from tests.test_cli_paths_under_an_ascii_locale import ASCII_LOCALE, CURE, shown

SET = "h200x1_shared_short"


def sacscale_in(folder, *argv, utf8=False, env=None):
    env = {**os.environ, **ASCII_LOCALE, **(env or {}), **({"PYTHONUTF8": "1"} if utf8 else {})}
    return subprocess.run([sys.executable, "-m", "sacscale.cli", *argv], capture_output=True, cwd=folder, env=env,
                          timeout=600)


def lines_of(done) -> list[str]:
    return done.stderr.decode("ascii", "backslashreplace").strip().splitlines()


@pytest.fixture
def placed_set(tmp_path):
    """A committed set copied into a folder whose name is not ASCII."""
    return copy_committed_set(tmp_path / "dé", SET)


def test_a_relative_argument_in_a_non_ascii_working_folder_names_the_path_it_joins_to(placed_set):
    repo = placed_set.parent.parent
    done = sacscale_in(repo, "verify", f"results/{SET}")
    assert done.returncode == 2 and lines_of(done) == [
        f"sacscale verify: error: root 'results/{SET}' is {shown(placed_set)} (joined to the working folder): "
        f"{CURE}"], done.stderr


def test_an_ascii_path_through_a_link_to_a_non_ascii_folder_names_where_it_leads(placed_set, tmp_path):
    (tmp_path / "asc").symlink_to(placed_set.parent.parent)
    given = tmp_path / "asc" / "results" / SET
    done = sacscale_in(tmp_path, "verify", str(given))
    assert done.returncode == 2 and lines_of(done) == [
        f"sacscale verify: error: root {str(given)!r} is {shown(placed_set)} (where its links lead): {CURE}"], \
        done.stderr


def test_with_the_cure_the_same_relative_argument_verifies(placed_set):
    done = sacscale_in(placed_set.parent.parent, "verify", f"results/{SET}", utf8=True)
    assert done.returncode == 0 and b"verified 36 files" in done.stdout, done.stdout + done.stderr


def test_a_word_that_names_no_path_is_not_joined_to_the_working_folder(tmp_path):
    """`--require-commands verify` is no path: judged as text only, it passes in a non-ASCII folder."""
    here = tmp_path / "dé"
    here.mkdir()
    done = sacscale_in(here, "verify-env", "--output", str(tmp_path / "env.json"), "--require-commands", "verify")
    assert b"file-system encoding" not in done.stderr, done.stderr


@pytest.mark.parametrize("variable", ["SACSCALE_MACHINE_LOCK_DIR", "SACSCALE_LOCK_DIR"])
def test_a_lock_folder_setting_the_encoding_cannot_hold_names_the_cure(tmp_path, variable):
    folder = tmp_path / "lé"
    done = record_run_with_machine_lock(tmp_path, {**ASCII_LOCALE, variable: str(folder)})
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [
        f"sacscale record-run: run q_r1_n1 not started: {variable} {shown(folder)}: {CURE}"], done.stderr
    assert not folder.exists() and not (tmp_path / "elsewhere").exists()


def test_a_lock_folder_setting_through_a_link_to_a_non_ascii_folder_names_where_it_leads(tmp_path):
    target = tmp_path / "lé"
    target.mkdir(mode=0o700)
    (tmp_path / "lk").symlink_to(target)
    done = record_run_with_machine_lock(tmp_path, {**ASCII_LOCALE, "SACSCALE_MACHINE_LOCK_DIR": str(tmp_path / "lk")})
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [
        f"sacscale record-run: run q_r1_n1 not started: SACSCALE_MACHINE_LOCK_DIR {str(tmp_path / 'lk')!r} is "
        f"{shown(target)} (where its links lead): {CURE}"], done.stderr
    assert not any(target.iterdir()) and not (tmp_path / "elsewhere").exists()


def test_an_asset_folder_setting_the_encoding_cannot_hold_names_the_cure(tmp_path):
    """SACSCALE_G1_ASSETS non-ASCII: each collector died on MuJoCo refusing the name, after the job started."""
    folder = tmp_path / "gé"
    env = {**ASCII_LOCALE, "SACSCALE_G1_ASSETS": str(folder)}
    done = sacscale_in(tmp_path, "train", "--devices", "cpu", "--iterations", "1", "--log-dir", str(tmp_path / "run"),
                       env=env)
    assert done.returncode == 2 and lines_of(done) == [
        f"sacscale train: error: no --model given, and the task's model cannot be built here: $SACSCALE_G1_ASSETS "
        f"{shown(folder)}: {CURE}; or pass --model with a compiled model (.mjb, as `sacscale prepare-model` writes)"], \
        done.stderr
    assert not (tmp_path / "run").exists()
