"""`sacscale train` run from a folder another user can write. Before: multiprocessing's
spawn children (the ranks, the collectors) start as `python -c 'from multiprocessing.spawn
import spawn_main; ...'`, whose `-c` put the working folder first on their import path: that
user's `multiprocessing.py` there ran as this user in every collector, and the job failed
(`collector of rank 0 ... exited with code 1`). Now the CLI sets PYTHONSAFEPATH for every
child it starts: two spawned ranks and their collectors train, the planted module unread."""

import json

from faultkit import Job, train_cmd


def test_spawned_ranks_and_collectors_import_nothing_from_the_working_folder(tmp_path, g1_mjb, jobs):
    folder, ran = tmp_path / "theirs", tmp_path / "ran"
    folder.mkdir()
    folder.chmod(0o1777)
    (folder / "multiprocessing.py").write_text(f"open({str(ran)!r}, 'a').write('ran\\n')\nraise SystemExit(1)\n")
    job = Job(train_cmd(tmp_path / "run", g1_mjb, devices="cpu,cpu", iterations=1, timeout_s=120), folder)
    jobs.append(job)
    code = job.wait(300)  # two ranks, each with its collector, on a loaded 2-core machine
    assert not ran.exists()
    assert code == 0, job.stderr()[-2000:]
    meta = json.loads((tmp_path / "run" / "train_meta.json").read_text())
    assert meta["status"] == "completed" and meta["world_size"] == 2
