"""`sacscale evaluate`: the JSON it writes, the stand-still baseline, determinism, the
figure, and clear errors for checkpoints it cannot run. Tiny runs: 11 envs, 1.5 s."""

import json
import math

import mujoco
import numpy as np
import pytest
import torch

from sacscale.cli import main
from sacscale.eval.evaluate import COMMAND_GRID, heading_frame_velocity, tracking_errors
from sacscale.learn.networks import Actor

FAST = ["--envs-per-command", "1", "--seconds", "1.5", "--settle-s", "0.5", "--threads", "2"]
ACTOR_KWARGS = dict(obs_dim=98, action_dim=29, hidden=[32], log_std_min=-5.0, log_std_max=0.0, mean_clip=10.0)


def make_checkpoint(path, head_std=0.05, **changes):
    """A random-init actor in the `sacscale train` checkpoint format (small mean head: near-zero actions)."""
    torch.manual_seed(0)
    actor = Actor(**ACTOR_KWARGS)
    torch.nn.init.normal_(actor.mean_head.weight, std=head_std)
    ckpt = {"format": "sacscale-checkpoint", "version": 1, "actor_kwargs": dict(ACTOR_KWARGS),
            "actor_flat": actor.flat_parameters(), "task": {"tilt_obs": "world"}, "iteration": 7,
            "env_steps": 1234, "total_env_steps": 1234, "model_sha256": None, "train_config": {},
            "learner_state": {"actor": actor.flat_parameters()}}
    ckpt.update(changes)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(ckpt, path)
    return path


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory, model_file):
    d = tmp_path_factory.mktemp("eval")
    ckpt = make_checkpoint(d / "run" / "checkpoints" / "final.pt")
    out, fig = d / "eval.json", d / "eval.png"
    argv = ["evaluate", str(ckpt), "--output", str(out), "--figure", str(fig), "--model", str(model_file), *FAST]
    assert main(argv) == 0
    return d, json.loads(out.read_text()), fig


def _finite_nonneg(x):
    return isinstance(x, float) and math.isfinite(x) and x >= 0


def test_json_schema(evaluated):
    _, r, _ = evaluated
    assert {"checkpoint", "iteration", "env_steps", "protocol", "overall", "per_command", "baseline_stand_still",
            "ratio_to_stand_still"} <= set(r)
    assert (r["iteration"], r["env_steps"]) == (7, 1234)
    p = r["protocol"]
    assert (p["num_envs"], p["steps"], p["settle_steps"], p["tilt_obs"]) == (11, 75, 25, "world")
    assert p["commands"] == {k: list(v) for k, v in COMMAND_GRID.items()}
    assert len(p["model_sha256"]) == 64
    for section in (r["overall"], r["baseline_stand_still"]["overall"]):
        assert set(section["rms_error"]) == {"lin_vel_xy", "yaw_rate", "yaw_rate_pelvis"}
        assert 0.0 <= section["fall_rate"] <= 1.0 and section["episodes"] == 11
    assert list(r["per_command"]) == list(COMMAND_GRID) == list(r["baseline_stand_still"]["per_command"])
    for name, c in r["per_command"].items():
        assert c["command"] == list(COMMAND_GRID[name])
        assert c["fall_rate"] in (0.0, 1.0)  # one env per command
        assert len(c["mean_achieved"]) == len(c["std_achieved"]) == 3
        if c["samples"]:  # an env that fell before the settling time leaves no samples: nulls
            assert all(_finite_nonneg(v) for v in c["rms_error"].values())
            assert all(math.isfinite(v) for v in c["mean_achieved"])
        assert set(c["ratio_to_stand_still"]) == {"lin_vel_xy", "yaw_rate", "yaw_rate_pelvis"}
    assert r["per_command"]["stand"]["ratio_to_stand_still"] == {"lin_vel_xy": None, "yaw_rate": None,
                                                                 "yaw_rate_pelvis": None}
    # the near-zero policy stands for the first 1.5 s in most envs: errors are measured
    assert r["overall"]["samples"] > 0 and all(_finite_nonneg(v) for v in r["overall"]["rms_error"].values())
    for k, ratio in r["ratio_to_stand_still"].items():
        base = r["baseline_stand_still"]["overall"]["rms_error"][k]
        assert ratio == pytest.approx(r["overall"]["rms_error"][k] / base, rel=1e-12)


def test_stand_still_baseline_is_the_command_magnitude(evaluated):
    _, r, _ = evaluated
    base = r["baseline_stand_still"]
    sq_lin, sq_yaw = [], []
    for name, (vx, vy, wz) in COMMAND_GRID.items():
        c = base["per_command"][name]
        assert c["rms_error"]["lin_vel_xy"] == pytest.approx(math.hypot(vx, vy), rel=1e-12, abs=0)
        assert c["rms_error"]["yaw_rate"] == pytest.approx(abs(wz), rel=1e-12, abs=0)
        assert c["fall_rate"] == 0.0 and c["mean_achieved"] == [0.0, 0.0, 0.0]
        assert c["samples"] == 75 - 25 + 1  # steps 25..75 after settling, one env
        # the task's tracking kernel of a constant error |command|
        assert c["normalised_tracking"]["lin_vel_xy"] == pytest.approx(math.exp(-(vx * vx + vy * vy) / 0.25), rel=1e-12)
        assert c["normalised_tracking"]["yaw_rate"] == pytest.approx(math.exp(-wz * wz / 0.25), rel=1e-12)
        sq_lin.append(vx * vx + vy * vy)
        sq_yaw.append(wz * wz)
    # equal sample counts per command: the overall rms is the rms over the grid
    assert base["overall"]["rms_error"]["lin_vel_xy"] == pytest.approx(math.sqrt(np.mean(sq_lin)), rel=1e-12)
    assert base["overall"]["rms_error"]["yaw_rate"] == pytest.approx(math.sqrt(np.mean(sq_yaw)), rel=1e-12)
    assert base["overall"]["fall_rate"] == 0.0


def test_same_inputs_same_numbers_and_run_dir_argument(evaluated, model_file):
    d, first, _ = evaluated
    out = d / "again.json"
    # the run directory this time: it resolves to the same checkpoints/final.pt
    assert main(["evaluate", str(d / "run"), "--output", str(out), "--model", str(model_file), *FAST]) == 0
    again = json.loads(out.read_text())
    assert again["checkpoint"] == first["checkpoint"]
    first.pop("timing"), again.pop("timing")
    assert again == first


def test_stochastic_actions_are_a_different_reproducible_protocol(evaluated, model_file):
    d, det, _ = evaluated
    runs = []
    for name in ("s1.json", "s2.json"):
        out = d / name
        assert main(["evaluate", str(d / "run"), "--output", str(out), "--model", str(model_file), *FAST,
                     "--stochastic"]) == 0
        runs.append(json.loads(out.read_text()))
    assert runs[0]["protocol"]["actions"].startswith("stochastic")
    assert runs[0]["overall"] == runs[1]["overall"]  # seeded noise
    assert runs[0]["overall"]["rms_error"] != det["overall"]["rms_error"]


def test_noise_scale_spans_deterministic_to_training_noise(evaluated, model_file):
    """--noise-scale 0 is the protocol's tanh(mean), 1 is --stochastic, bit for bit; 0.5 is
    neither; every result records the policy's own std, which noise cannot push outside
    the actor's log-std range."""
    d, det, _ = evaluated
    got = {}
    for scale in ("0", "0.5", "1"):
        out = d / f"scale{scale}.json"
        assert main(["evaluate", str(d / "run"), "--output", str(out), "--model", str(model_file), *FAST,
                     "--noise-scale", scale]) == 0
        got[scale] = json.loads(out.read_text())
    out = d / "stochastic.json"
    assert main(["evaluate", str(d / "run"), "--output", str(out), "--model", str(model_file), *FAST,
                 "--stochastic"]) == 0
    stochastic = json.loads(out.read_text())
    assert got["0"]["overall"] == det["overall"] and got["0"]["protocol"]["actions"] == det["protocol"]["actions"]
    assert got["1"]["overall"] == stochastic["overall"] and got["1"]["protocol"] == stochastic["protocol"]
    assert got["1"]["protocol"]["actions"].startswith("stochastic: sampled as in training")
    assert "0.5 x the policy's std" in got["0.5"]["protocol"]["actions"]
    assert got["0.5"]["protocol"]["noise_scale"] == 0.5
    half = got["0.5"]["overall"]["rms_error"]
    assert half != det["overall"]["rms_error"] and half != got["1"]["overall"]["rms_error"]
    lo, hi = math.exp(ACTOR_KWARGS["log_std_min"]), math.exp(ACTOR_KWARGS["log_std_max"])
    assert all(lo <= r["action_std_mean"] <= hi for r in got.values())
    assert got["0"]["action_std_mean"] == det["action_std_mean"]


def test_figure_is_written(evaluated):
    _, _, fig = evaluated
    assert fig.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and fig.stat().st_size > 10_000


def test_tracking_errors_by_hand():
    """Perfect tracking scores 0; a fall stops an env's samples; rms pools the samples."""
    names = ["a", "b"]
    group = np.array([0, 0, 1])
    commands = np.array([[0.5, 0.0, 0.0], [0.5, 0.0, 0.0], [0.0, 0.3, 0.6]])
    achieved = np.broadcast_to(commands[:, [0, 1, 2, 2]], (4, 3, 4)).copy()
    achieved[:, 1, 0] = 0.0  # env 1 does not move: lin error 0.5
    measured = np.ones((4, 3), dtype=bool)
    measured[2:, 2] = False  # env 2 fell at step 2
    fell = np.array([False, False, True])
    r = tracking_errors(names, group, commands, achieved, measured, fell)
    a, b = r["per_command"]["a"], r["per_command"]["b"]
    assert a["rms_error"]["lin_vel_xy"] == pytest.approx(math.sqrt(0.25 / 2))
    assert b["rms_error"] == {"lin_vel_xy": 0.0, "yaw_rate": 0.0, "yaw_rate_pelvis": 0.0}
    assert (a["fall_rate"], b["fall_rate"], b["samples"]) == (0.0, 1.0, 2)
    assert a["mean_achieved"] == pytest.approx([0.25, 0.0, 0.0])
    assert r["overall"]["rms_error"]["lin_vel_xy"] == pytest.approx(math.sqrt(4 * 0.25 / 10))
    assert r["overall"]["fall_rate"] == pytest.approx(1 / 3) and r["overall"]["episodes"] == 3


def test_heading_frame_velocity_against_mujoco(model_file):
    """(vx, vy) in the heading frame and the world yaw rate of a tilted, turned pelvis,
    against MuJoCo's own world-frame body velocity."""
    model = mujoco.MjModel.from_binary_path(str(model_file))
    data = mujoco.MjData(model)
    rng = np.random.default_rng(1)
    quat = np.empty(4)
    mujoco.mju_euler2Quat(quat, np.array([0.2, -0.3, 2.5]), "XYZ")  # roll, pitch, then yaw 2.5 rad about fixed axes
    data.qpos[3:7] = quat
    data.qvel[:6] = rng.uniform(-1, 1, 6)
    mujoco.mj_forward(model, data)
    world = np.empty(6)  # (angular, linear) in world coordinates
    # XBODY: at the body frame's origin, where the free joint's linear velocity is taken
    mujoco.mj_objectVelocity(model, data, mujoco.mjtObj.mjOBJ_XBODY, model.body("pelvis").id, world, 0)
    got = heading_frame_velocity(data.qpos[None], data.qvel[None])[0]
    yaw = 2.5
    rot = np.array([[np.cos(yaw), np.sin(yaw)], [-np.sin(yaw), np.cos(yaw)]])
    assert got[:2] == pytest.approx(rot @ world[3:5], abs=1e-9)
    assert got[2] == pytest.approx(world[2], abs=1e-9)


@pytest.mark.parametrize("case, message", [
    ("missing", "no such checkpoint file"),
    ("empty_run_dir", "checkpoints/final.pt: no such checkpoint file"),
    ("not_torch", "not a readable torch checkpoint"),
    ("inflated_pickle", "its pickled part would inflate to 17,825,792 bytes"),
    ("compressed_pickle", "its record 'archive/data.pkl' is compressed; torch stores every record as it is"),
    ("bad_format", "format is 'something-else', expected 'sacscale-checkpoint'"),
    ("bad_version", "checkpoint version 3"),
    ("wrong_obs_dim", "actor_kwargs.obs_dim is 97, must be the task's 98"),
    ("wrong_flat", "actor does not load"),
    ("bad_tilt", "tilt_obs is 'sideways'"),
])
def test_unusable_checkpoints_exit_2_naming_the_problem(tmp_path, capsys, model_file, case, message):
    path = tmp_path / "ckpt.pt"
    if case == "missing":
        pass
    elif case == "empty_run_dir":
        path = tmp_path / "run"
        path.mkdir()
    elif case == "not_torch":
        path.write_text("hello")
    elif case in ("inflated_pickle", "compressed_pickle"):
        # 17 MiB that would unpickle into gigabytes of nested tuples; compressed, a few kB
        import zipfile

        how = zipfile.ZIP_STORED if case == "inflated_pickle" else zipfile.ZIP_DEFLATED
        with zipfile.ZipFile(path, "w", how) as archive:
            with archive.open("archive/data.pkl", "w", force_zip64=True) as member:
                member.write(b"(" * 17 * 2**20)
    elif case == "bad_format":
        make_checkpoint(path, format="something-else")
    elif case == "bad_version":
        make_checkpoint(path, version=3)
    elif case == "wrong_obs_dim":
        make_checkpoint(path, actor_kwargs={**ACTOR_KWARGS, "obs_dim": 97})
    elif case == "wrong_flat":
        make_checkpoint(path, actor_flat=torch.zeros(10))
    elif case == "bad_tilt":
        make_checkpoint(path, task={"tilt_obs": "sideways"})
    code = main(["evaluate", str(path), "--output", str(tmp_path / "e.json"), "--model", str(model_file), *FAST])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.startswith("sacscale evaluate: error: ") and message in err and "\n" not in err
    assert not (tmp_path / "e.json").exists()


def test_bad_protocol_settings_exit_2(tmp_path, capsys, model_file):
    ckpt = make_checkpoint(tmp_path / "ckpt.pt")
    for extra, message in ((["--settle-s", "5"], "--settle-s 5.0"),
                           (["--envs-per-command", "0"], "--envs-per-command"),
                           (["--noise-scale", "-0.5"], "--noise-scale must be a finite number >= 0"),
                           (["--noise-scale", "nan"], "--noise-scale must be a finite number >= 0")):
        code = main(["evaluate", str(ckpt), "--output", str(tmp_path / "e.json"), "--model", str(model_file),
                     *FAST, *extra])
        assert code == 2 and message in capsys.readouterr().err
    code = main(["evaluate", str(ckpt), "--output", str(tmp_path / "e.json"), "--model", str(tmp_path / "nope.mjb")])
    assert code == 2 and "nope.mjb: no such file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:  # past one episode: refused as the options are read
        main(["evaluate", str(ckpt), "--output", str(tmp_path / "e.json"), "--seconds", "25"])
    assert exc.value.code == 2 and "--seconds: '25': must be 0.02..20 (one episode)" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:  # less than one control step
        main(["evaluate", str(ckpt), "--output", str(tmp_path / "e.json"), "--seconds", "0.001"])
    assert exc.value.code == 2 and "--seconds: '0.001': must be 0.02..20 (one episode)" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:  # one noise setting, not two
        main(["evaluate", str(ckpt), "--output", str(tmp_path / "e.json"), "--stochastic", "--noise-scale", "0.5"])
    assert exc.value.code == 2 and "not allowed with argument" in capsys.readouterr().err
    assert not (tmp_path / "e.json").exists()


@pytest.mark.parametrize("planted", ["the old fixed name", "this writer's own name"])
def test_the_figure_is_not_written_through_a_link_at_a_temporary_name(evaluated, tmp_path, planted):
    """A link planted where the figure's temporary file goes (in /tmp, by another local user)
    must not have the figure written into the file it names: the figure was saved to a fixed
    `.NAME.tmp.png` that followed links, and two evaluations of one figure at once collided there."""
    import os
    import threading

    from sacscale.eval.evaluate import plot_tracking

    _, result, _ = evaluated
    victim = tmp_path / "victim.txt"
    victim.write_text("the victim's own\n")
    out = tmp_path / "fig.png"
    name = ".fig.png.tmp.png" if planted == "the old fixed name" else \
        f".fig.tmp{os.getpid()}.{threading.get_ident()}.png"
    (tmp_path / name).symlink_to(victim)
    plot_tracking(result, out)  # a link at its own name is removed, never followed
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and not out.is_symlink()
    assert victim.read_text() == "the victim's own\n"
