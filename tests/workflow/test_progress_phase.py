"""The terminal's progress lines of our trainer name the phase: iterations before the
first learner update only collect (far more env steps/s), later ones learn."""

import io

from sacscale.pipeline.run_output import ProgressEcho

BAR = "train:  {p}%|####| {i}/24 [00:01<00:09,  9.00it/s, fps={fps}, ret=0.1]\r"


def _feed(echo, i, fps):
    echo.feed(BAR.format(p=i * 100 // 24, i=i, fps=fps).encode())


def test_phases_are_named_and_the_first_update_is_the_line_between():
    from sacscale.train import FIRST_UPDATE_DONE

    out = io.StringIO()
    echo = ProgressEcho("training cpu_r1_n1_cpu", every_it=1, every_s=3600, out=out, phases=True)
    _feed(echo, 5, "721")
    # split across chunks, as the pipe delivers it; two ranks print it
    line = f"sacscale train: rank 0: {FIRST_UPDATE_DONE} at iteration 10 (3.1 s: compile, warm-up, graph capture)\n"
    echo.feed(line[:30].encode())
    echo.feed(line[30:].encode() + line.replace("rank 0", "rank 1").encode())
    _feed(echo, 9, "721")  # the bar redrawn under that line: iteration 10 is not complete yet
    _feed(echo, 10, "47")
    _feed(echo, 24, "47")
    assert out.getvalue().splitlines() == [
        "training cpu_r1_n1_cpu: iteration 5/24 (collecting; learning not started), 721 env steps/s, ETA 00:09",
        "training cpu_r1_n1_cpu: first learner update done at iteration 10 (3.1 s: compile, warm-up, graph capture)",
        "training cpu_r1_n1_cpu: iteration 9/24 (collecting; learning not started), 721 env steps/s, ETA 00:09",
        "training cpu_r1_n1_cpu: iteration 10/24 (learning), 47 env steps/s, ETA 00:09",
        "training cpu_r1_n1_cpu: iteration 24/24 (learning), 47 env steps/s, ETA 00:00",
    ]


def test_another_commands_progress_names_no_phase():
    out = io.StringIO()
    echo = ProgressEcho("training ref_r1", every_it=5, every_s=3600, out=out)
    _feed(echo, 5, "100")
    assert out.getvalue() == "training ref_r1: iteration 5/24, 100 env steps/s, ETA 00:09\n"
