import multiprocessing as mp
import os
import signal
import time

from sacscale.processes import describe_exit, is_stopped


def test_describe_exit_names_the_code_or_the_signal():
    assert describe_exit(3) == "exited with code 3"
    assert describe_exit(-9) == "was killed by signal 9 (SIGKILL)"
    assert describe_exit(-200) == "was killed by signal 200 (unknown signal)"


def test_is_stopped_sees_a_stopped_child():
    child = mp.get_context("spawn").Process(target=time.sleep, args=(30,))
    child.start()
    try:
        assert not is_stopped(child.pid)
        os.kill(child.pid, signal.SIGSTOP)
        deadline = time.monotonic() + 5
        while not is_stopped(child.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert is_stopped(child.pid)
    finally:
        child.kill()
        child.join()
    assert not is_stopped(child.pid)  # gone: no /proc entry
