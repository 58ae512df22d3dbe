"""`render`, `evaluate` and `render-best` read a checkpoint or a --model through the user's
own symbolic links, never through another user's: refused in one line naming the argument,
exit 2, before torch is imported. Before: root rendered and evaluated a checkpoint only root
could read through a link another user planted in /tmp (the run folder, the .pt, a link in
her folder, `--runs-dir`), while `--model` refused even the user's own link ("evidence must
be regular files")."""

import hashlib
import json
import os
import subprocess
import sys

import pytest

from sacscale.cli import main

from cli_runs import one_line, other_users_link, sacscale
from test_evaluate import make_checkpoint

REFUSED = "another user's symbolic link (uid 1001); an input is never read through one"
FAST = ["--envs-per-command", "1", "--seconds", "0.2", "--settle-s", "0.1", "--threads", "1"]
VIDEO = ["--seconds", "0.2", "--width", "64", "--height", "48", "--fps", "10"]
as_root = pytest.mark.skipif(os.getuid() != 0, reason="giving a link to another user needs root")


@pytest.fixture
def private_run(tmp_path):
    """A run whose checkpoint only root can read (folder 0700, file 0600)."""
    run = tmp_path / "private" / "run"
    make_checkpoint(run / "checkpoints" / "final.pt")
    (tmp_path / "private").chmod(0o700)
    (run / "checkpoints" / "final.pt").chmod(0o600)
    return run


def _link(tmp_path, private_run, how):
    """CHECKPOINT_OR_RUN given through another user's link: to the run, to its .pt, or a
    link of hers inside her own folder."""
    shared = tmp_path / "shared"
    if how == "run":
        return other_users_link(shared / "everun", private_run)
    if how == "pt":
        return other_users_link(shared / "evefinal.pt", private_run / "checkpoints" / "final.pt")
    folder = shared / "evedir"
    folder.mkdir(parents=True)
    os.chown(folder, 1001, 1001)
    return other_users_link(folder / "run", private_run)


def _no_torch(argv):
    """The CLI run in a child that reports whether torch was imported."""
    code = ("import sys, runpy; sys.argv = ['sacscale', *sys.argv[1:]]\n"
            "try:\n    runpy.run_module('sacscale.cli', run_name='__main__')\n"
            "finally:\n    sys.stderr.write('TORCH' if 'torch' in sys.modules else '')")
    return subprocess.run([sys.executable, "-c", code, *map(str, argv)], capture_output=True, text=True, timeout=120)


@as_root
@pytest.mark.parametrize("how", ["run", "pt", "link_in_her_folder"])
@pytest.mark.parametrize("command", ["render", "evaluate"])
def test_a_checkpoint_through_another_users_link_is_refused(tmp_path, private_run, how, command):
    link = _link(tmp_path, private_run, how)
    out = tmp_path / ("c.mp4" if command == "render" else "c.json")
    extra = VIDEO if command == "render" else FAST
    done = sacscale(command, link, "--output", out, *extra)
    one_line(done, REFUSED)
    assert f"error: {link}: " in done.stderr and not out.exists()
    assert "TORCH" not in _no_torch([command, link, "--output", out, *extra]).stderr


@as_root
def test_a_link_of_ours_to_another_users_link_is_not_followed(tmp_path, private_run):
    theirs = other_users_link(tmp_path / "shared" / "everun", private_run)
    ours = tmp_path / "mine"
    ours.symlink_to(theirs)
    done = sacscale("evaluate", ours, "--output", tmp_path / "c.json", *FAST)
    one_line(done, f"{ours}: reached through {theirs}, {REFUSED}")


@as_root
def test_render_best_refuses_a_runs_dir_through_another_users_link(tmp_path, private_run):
    evaluation = tmp_path / "eval" / "run.json"
    evaluation.parent.mkdir()
    evaluation.write_text(json.dumps({"overall": {"normalised_tracking": {"lin_vel_xy": 0.5, "yaw_rate": 0.5},
                                                  "fall_rate": 0.0}, "env_steps": 100}))
    link = other_users_link(tmp_path / "shared" / "everuns", private_run.parent)
    video, record = tmp_path / "best.webp", tmp_path / "best.json"
    done = sacscale("render-best", "--evaluations", evaluation, "--runs-dir", link, "--output", video,
                    "--record", record, *VIDEO)
    one_line(done, f"--runs-dir {link}: {REFUSED}")
    assert not video.exists() and not record.exists()


@as_root
@pytest.mark.parametrize("command", ["render", "evaluate"])
def test_a_model_through_another_users_link_is_refused(tmp_path, private_run, command):
    model = tmp_path / "private" / "g1.mjb"
    model.write_bytes(b"not read")
    link = other_users_link(tmp_path / "shared" / "g1.mjb", model)
    out = tmp_path / ("c.mp4" if command == "render" else "c.json")
    extra = VIDEO if command == "render" else FAST
    done = sacscale(command, private_run, "--output", out, "--model", link, *extra)
    one_line(done, f"--model {link}: {REFUSED}")


def test_evaluate_reads_our_own_links_and_records_the_models_hash(tmp_path, model_file):
    run = make_checkpoint(tmp_path / "run" / "checkpoints" / "final.pt").parents[1]
    (tmp_path / "myrun").symlink_to(run)
    (tmp_path / "mymodel.mjb").symlink_to(model_file)
    out = tmp_path / "e.json"
    assert main(["evaluate", str(tmp_path / "myrun"), "--output", str(out),
                 "--model", str(tmp_path / "mymodel.mjb"), *FAST]) == 0
    record = json.loads(out.read_text())
    assert record["protocol"]["model_sha256"] == hashlib.sha256(model_file.read_bytes()).hexdigest()
    final = run / "checkpoints" / "final.pt"
    assert record["checkpoint_sha256"] == hashlib.sha256(final.read_bytes()).hexdigest()


def test_render_reads_our_own_link_to_a_model(tmp_path, model_file, gl_env, capsys):
    ckpt = make_checkpoint(tmp_path / "run" / "checkpoints" / "final.pt")
    (tmp_path / "mymodel.mjb").symlink_to(model_file)
    out = tmp_path / "walk.gif"
    assert main(["render", str(ckpt), "--output", str(out), "--model", str(tmp_path / "mymodel.mjb"), *VIDEO]) == 0
    assert out.stat().st_size > 0, capsys.readouterr().err
