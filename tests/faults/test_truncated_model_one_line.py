"""A truncated compiled model (.mjb) is one line: MuJoCo printed its own note ("WARNING:
Truncated model file - ran out of data ...") and a blank line to the process's stderr above
the command's refusal; the note is now part of that line."""

import numpy as np
import pytest

from sacscale.cli import main
from sacscale.mujoco_lib import mujoco

TINY = "<mujoco><worldbody><body><freejoint/><geom size='0.1'/></body></worldbody></mujoco>"


@pytest.fixture
def truncated(tmp_path):
    model = mujoco.MjModel.from_xml_string(TINY)
    buf = np.zeros(mujoco.mj_sizeModel(model), dtype=np.uint8)
    mujoco.mj_saveModel(model, None, buf)
    path = tmp_path / "cut.mjb"
    path.write_bytes(buf.tobytes()[: buf.size // 2])
    return path


@pytest.mark.parametrize("argv", [["prepare-model", "--output-dir", "{d}/model", "--from-mjb", "{m}"],
                                  ["env-bench", "--model", "{m}"]])
def test_a_truncated_model_is_refused_in_one_line_with_mujocos_note_in_it(truncated, capfd, argv):
    capfd.readouterr()
    code = main([a.format(d=truncated.parent, m=truncated) for a in argv])
    err = capfd.readouterr().err  # the file descriptor's: MuJoCo writes there, not to sys.stderr
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "WARNING" not in err, err
    assert "not a loadable compiled MuJoCo model (.mjb)" in err and "Truncated model file" in err, err
    assert not (truncated.parent / "model").exists()


def test_the_warning_handler_is_given_back(truncated):
    before = mujoco.get_mju_user_warning()
    with pytest.raises(ValueError, match="Truncated model file"):
        from sacscale.mujoco_lib import load_mjb
        load_mjb(str(truncated))
    assert mujoco.get_mju_user_warning() is before
