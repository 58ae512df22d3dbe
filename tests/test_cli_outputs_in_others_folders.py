"""An output written into a folder another user can swap it in. Before: `verify --output`
(and every other command's output file) was written into a folder of another user's, or
one open to all without the sticky bit, where that user could replace it before it was
read, while `report` refused such a folder. Now every command refuses it in one line
naming the option and the folder, exit 2, nothing written; a sticky folder (/tmp) is used."""

import os

import pytest

from cli_runs import REPO, SET, one_line, sacscale

RESULTS = REPO / "results" / SET
METRICS = sorted((RESULTS / "metrics").glob("*.json"))


def _folder(path, mode):
    path.mkdir()
    path.chmod(mode)
    return path


def _says(option, folder, output):
    return (f"error: argument {option}: {folder}: is writable by other users without the sticky bit (mode 0777), "
            f"who could replace what is written there; write {output} into a folder of your own")


def test_verify_output_into_a_folder_open_to_all_is_refused(tmp_path):
    shared = _folder(tmp_path / "open", 0o777)
    done = sacscale("verify", RESULTS, "--output", shared / "verify.json")
    one_line(done, "sacscale verify: " + _says("--output", shared, shared / "verify.json"))
    assert list(shared.iterdir()) == []


@pytest.mark.parametrize("argv, option", [
    (["analyze-run", RESULTS / "runs" / "shared_r1_n1_pool7", "--output", "{d}/m.json"], "--output"),
    (["aggregate", *METRICS, "--csv", "{d}/s.csv", "--json", "{tmp}/s.json"], "--csv"),
    (["manifest", RESULTS, "--output", "{d}/MANIFEST.sha256"], "--output"),
    (["verify-env", "--output", "{d}/env.json"], "--output"),
])
def test_other_commands_refuse_it_too(tmp_path, argv, option):
    shared = _folder(tmp_path / "open", 0o777)
    argv = [str(a).replace("{d}", str(shared)).replace("{tmp}", str(tmp_path)) for a in argv]
    output = argv[argv.index(option) + 1]
    done = sacscale(*argv)
    one_line(done, _says(option, shared, output))
    assert list(shared.iterdir()) == []


def test_a_folder_to_be_made_in_one_open_to_all_is_refused(tmp_path):
    shared = _folder(tmp_path / "open", 0o777)
    done = sacscale("verify", RESULTS, "--output", shared / "new" / "verify.json")
    one_line(done, f"argument --output: {shared} (where {shared / 'new'} would be made): is writable by other users")
    assert list(shared.iterdir()) == []


@pytest.mark.skipif(os.getuid() != 0, reason="giving a folder to another user needs root")
def test_verify_output_into_another_users_folder_is_refused(tmp_path):
    theirs = _folder(tmp_path / "theirs", 0o755)
    os.chown(theirs, 1001, 1001)
    done = sacscale("verify", RESULTS, "--output", theirs / "verify.json")
    one_line(done, f"sacscale verify: error: argument --output: {theirs}: belongs to uid 1001, another user, who "
                   f"could replace what is written there; write {theirs / 'verify.json'} into a folder of your own")
    assert list(theirs.iterdir()) == []


def test_verify_output_into_a_sticky_folder_is_written(tmp_path):
    """As /tmp: no other user can remove or rename what we write there."""
    shared = _folder(tmp_path / "tmp", 0o1777)
    done = sacscale("verify", RESULTS, "--output", shared / "verify.json")
    assert done.returncode == 0, done.stderr
    assert (shared / "verify.json").is_file()


def _a_set(folder, mode):
    _folder(folder, 0o700)
    (folder / "a.json").write_text("{}\n")
    folder.chmod(mode)
    return folder


def test_manifests_default_outputs_into_a_set_open_to_all_are_refused(tmp_path):
    """MANIFEST.sha256 and manifest.json go into the set unless named: a set another user can
    swap files in was written into, while the same folder named with --json was refused."""
    shared = _a_set(tmp_path / "set", 0o777)
    done = sacscale("manifest", shared)
    one_line(done, f"sacscale manifest: error: {shared}: is writable by other users without the sticky bit (mode "
                   "0777), who could replace the MANIFEST.sha256 and manifest.json written there; give --output and "
                   "--json in a folder of your own")
    assert sorted(p.name for p in shared.iterdir()) == ["a.json"]
    done = sacscale("manifest", shared, "--output", tmp_path / "M.sha256")
    one_line(done, "could replace the manifest.json written there")
    done = sacscale("manifest", shared, "--output", tmp_path / "M.sha256", "--json", tmp_path / "m.json")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in shared.iterdir()) == ["a.json"]


@pytest.mark.skipif(os.getuid() != 0, reason="giving a folder to another user needs root")
def test_manifests_default_outputs_into_another_users_set_are_refused(tmp_path):
    theirs = _a_set(tmp_path / "theirs", 0o755)
    os.chown(theirs, 1001, 1001)
    done = sacscale("manifest", theirs)
    one_line(done, f"sacscale manifest: error: {theirs}: belongs to uid 1001, another user, who could replace the "
                   "MANIFEST.sha256 and manifest.json written there")
    assert sorted(p.name for p in theirs.iterdir()) == ["a.json"]


def test_manifests_default_outputs_into_a_set_of_ones_own_are_written(tmp_path):
    own = _a_set(tmp_path / "own", 0o755)
    done = sacscale("manifest", own)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in own.iterdir()) == ["MANIFEST.sha256", "a.json", "manifest.json"]


TRAIN = ["train", "--devices", "cpu", "--num-envs", "4", "--batch-size", "64", "--iterations", "2"]


@pytest.mark.parametrize("option", ["--log-dir", "--resume"])
def test_train_run_folder_in_a_folder_open_to_all_is_refused(tmp_path, option):
    """The trainer's run folder was made there (its checkpoints, events, train_meta.json)."""
    shared = _folder(tmp_path / "open", 0o777)
    run = shared / "t6"
    done = sacscale(*TRAIN, option, run)
    one_line(done, f"sacscale train: error: argument {option}: {shared} (where {run} would be made): is writable by "
                   f"other users without the sticky bit (mode 0777), who could replace what is written there; "
                   f"write {run} into a folder of your own")
    assert list(shared.iterdir()) == []


@pytest.mark.skipif(os.getuid() != 0, reason="giving a folder to another user needs root")
def test_train_log_dir_in_another_users_folder_is_refused(tmp_path):
    theirs = _folder(tmp_path / "theirs", 0o755)
    os.chown(theirs, 1001, 1001)
    run = theirs / "t6"
    done = sacscale(*TRAIN, "--log-dir", run)
    one_line(done, f"sacscale train: error: argument --log-dir: {theirs} (where {run} would be made): belongs to "
                   f"uid 1001, another user, who could replace what is written there; write {run} into a folder "
                   "of your own")
    assert list(theirs.iterdir()) == []


def test_train_resume_leaves_the_default_log_dir_unjudged(tmp_path):
    """With --resume the run goes on in its own folder: the default --log-dir (runs/train, in
    the current folder) is not written, so a current folder open to all is no reason to refuse."""
    shared = _folder(tmp_path / "open", 0o777)
    done = sacscale("train", "--resume", tmp_path / "none", cwd=shared)
    assert done.returncode == 2 and "argument --log-dir" not in done.stderr, done.stderr
    assert "no checkpoint there" in done.stderr, done.stderr
