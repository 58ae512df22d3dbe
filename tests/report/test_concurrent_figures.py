"""Two `sacscale report` runs into one folder (two invocations): each figure's temporary file
was `.NAME.tmp.png` for everyone, so the second writer's rename took the first's file away
and the first failed (`... -> NAME.png: no such file or directory`). Now the temporary
name is the process's and thread's own."""

import threading

import matplotlib.pyplot as plt

from sacscale.report import plots


def test_a_second_writer_of_the_same_figure_does_not_take_the_first_ones_file(tmp_path, monkeypatch):
    path = tmp_path / "figures" / "throughput_by_repeat.png"
    real_savefig = plt.Figure.savefig
    calls = []

    def savefig(fig, target, *args, **kwargs):
        real_savefig(fig, target, *args, **kwargs)
        calls.append(str(target))
        if len(calls) == 1:  # while the first writer is between its write and its rename
            other = threading.Thread(target=plots._save, args=(plt.figure(), path))
            other.start()
            other.join()

    monkeypatch.setattr(plt.Figure, "savefig", savefig)
    plots._save(plt.figure(), path)
    assert len(calls) == 2 and calls[0] != calls[1]
    assert path.is_file()
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left
