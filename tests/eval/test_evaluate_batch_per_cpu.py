"""`sacscale evaluate` steps every grid command's envs together, one MuJoCo call a control
step, where a stop (SIGTERM) is acted on only once the call returns. Before: up to 4096
envs a command (45,056 envs) at `--threads 1` made calls of 27 s, deaf to a stop. Now the
evaluation is held to env-bench's bound of envs a CPU in one call: one line naming
--envs-per-command, exit 2, before the checkpoint is read."""

import os

from sacscale.cli import main
from sacscale.eval.protocol import COMMAND_GRID
from sacscale.sim.step_limits import MAX_ENVS_PER_CPU_CALL


def evaluated(capsys, tmp_path, envs_per_command, threads):
    code = main(["evaluate", str(tmp_path / "none.pt"), "--output", str(tmp_path / "e.json"),
                 "--envs-per-command", str(envs_per_command), "--threads", str(threads)])
    return code, capsys.readouterr().err.strip()


def test_more_envs_a_cpu_than_one_call_may_step_are_refused(capsys, tmp_path):
    commands = len(COMMAND_GRID)
    cpus = len(os.sched_getaffinity(0))
    code, err = evaluated(capsys, tmp_path, 4096, 1)
    assert code == 2
    assert err == (f"sacscale evaluate: error: --envs-per-command 4096 ({commands} commands: {commands * 4096} envs "
                   f"stepped together) at 1 thread(s) on {cpus} CPU(s): {commands * 4096} envs a CPU in one MuJoCo "
                   f"step, past {MAX_ENVS_PER_CPU_CALL} (about 1.5 s; a stop is acted on only between steps): give "
                   "fewer envs or more threads")
    assert list(tmp_path.iterdir()) == []


def test_the_bound_is_on_all_commands_envs_a_thread(capsys, tmp_path):
    most = MAX_ENVS_PER_CPU_CALL // len(COMMAND_GRID)  # at one thread: the most envs a command
    code, err = evaluated(capsys, tmp_path, most + 1, 1)
    assert code == 2 and f"--envs-per-command {most + 1} (" in err, err
    code, err = evaluated(capsys, tmp_path, most, 1)  # within the bound: on to the checkpoint, not there
    assert code == 2 and "--envs-per-command" not in err and "none.pt" in err, err
    if len(os.sched_getaffinity(0)) >= 2:  # two threads step twice as many
        code, err = evaluated(capsys, tmp_path, most + 1, 2)
        assert code == 2 and "--envs-per-command" not in err, err
