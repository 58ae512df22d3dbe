"""`prepare-model --from-mjb` reads its model as evaluate and render read --model: through
one's own and root's links, never another user's, and a file over the model bound is
refused before it is read. Before: any link ended in `NotARegularFile ... (unexpected ...)`,
exit 1, after MuJoCo had loaded the model through it (another user's too), and a 1.5 GB
file was read whole before it was called no model. The record's hash is of the bytes loaded."""

import hashlib
import json
import os

import pytest

from cli_runs import one_line, other_users_link, sacscale
from sacscale.cli import main
from sacscale.eval import evaluate_checks
from sacscale.task import g1_model as g1

SMALL = ["--num-envs", "2", "--steps", "1"]


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "g1_walk_flat.mjb"
    g1.save_model(g1.build_g1_model(), path)
    return path


def test_our_own_link_is_followed_and_the_record_names_it_with_the_bytes_hash(tmp_path, model_file, capsys):
    link = tmp_path / "mine.mjb"
    link.symlink_to(model_file)
    out = tmp_path / "pm"
    assert main(["prepare-model", "--output-dir", str(out), "--from-mjb", str(link), *SMALL]) == 0, \
        capsys.readouterr().err
    source = json.loads((out / "model.json").read_text())["source"]
    assert source == {"mjb": "mine.mjb", "sha256": hashlib.sha256(model_file.read_bytes()).hexdigest()}


@pytest.mark.skipif(os.getuid() != 0, reason="giving a link to another user needs root")
def test_another_users_link_is_refused_before_it_is_read(tmp_path, model_file, monkeypatch):
    link = other_users_link(tmp_path / "shared" / "eve.mjb", model_file)
    out = tmp_path / "pm"
    done = sacscale("prepare-model", "--output-dir", out, "--from-mjb", link, *SMALL)
    one_line(done, f"sacscale prepare-model: error: --from-mjb {link}: another user's symbolic link (uid 1001); "
                   "an input is never read through one")
    assert not out.exists()


def test_a_model_over_its_bound_is_refused_unread_naming_the_option(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(evaluate_checks, "MAX_MODEL_BYTES", 2**20)  # the 256 MiB bound, made small to test
    big = tmp_path / "big.mjb"
    with open(big, "wb") as fh:
        fh.truncate(2**20 + 1)
    monkeypatch.setattr(g1.mujoco.MjModel, "from_binary_path", None)  # MuJoCo must not be asked to read it
    out = tmp_path / "pm"
    assert main(["prepare-model", "--output-dir", str(out), "--from-mjb", str(big), *SMALL]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"sacscale prepare-model: error: --from-mjb {big}: {2**20 + 1:,} bytes, more than any model of "
                   f"this trainer weighs (the bound is {2**20:,} bytes, 1 MiB): refused unread")
    assert not out.exists()


def _shared_copy(model_file, folder, uid=None):
    """A copy of the model that others may write (mode 666), given to `uid` where named."""
    folder.mkdir(exist_ok=True)
    copy = folder / "shared.mjb"
    copy.write_bytes(model_file.read_bytes())
    copy.chmod(0o666)
    if uid is not None:
        os.chown(copy, uid, uid)
    return copy


TAKEN_AS = ("every run of the set trains on the model prepared from it, as this user's own: use a copy of your "
            "own, closed to others (chmod go-w)")


def test_a_model_others_may_write_is_refused_naming_the_option(tmp_path, model_file):
    """As config files and planner.matrix are: another user could change the model between sets."""
    shared = _shared_copy(model_file, tmp_path / "shared")
    out = tmp_path / "pm"
    done = sacscale("prepare-model", "--output-dir", out, "--from-mjb", shared, *SMALL)
    one_line(done, f"sacscale prepare-model: error: --from-mjb {shared}: is writable by other users (mode 0666); "
                   + TAKEN_AS)
    assert not out.exists()


@pytest.mark.skipif(os.getuid() != 0, reason="giving a file to another user needs root")
def test_another_users_model_file_is_refused_naming_the_option_and_the_owner(tmp_path, model_file):
    shared = _shared_copy(model_file, tmp_path / "eve", uid=1001)
    out = tmp_path / "pm"
    done = sacscale("prepare-model", "--output-dir", out, "--from-mjb", shared, *SMALL)
    one_line(done, f"sacscale prepare-model: error: --from-mjb {shared}: belongs to uid 1001, another user; "
                   + TAKEN_AS)
    assert not out.exists()
