"""A mount point given as a folder that is renamed into or moved (a report's folder, a
record-run's run folder) is named as one, before anything is written or run: a rename does
not cross into another mount, nor can a mount point be replaced or set aside. Each case in
a private mount namespace with a tmpfs (and a bind mount); needs root (`unshare -m`)."""

import json
import shutil
import subprocess
import sys
import textwrap

import pytest



def _can_unshare() -> bool:
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return False
    return subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode == 0


pytestmark = pytest.mark.skipif(not _can_unshare(), reason="needs root for a private mount namespace (unshare -m)")

_SCENARIO = textwrap.dedent("""
    import json, os, subprocess, sys
    from pathlib import Path
    import sacscale
    from sacscale.commands import _report_output
    here = Path(sys.argv[1])
    mnt, source, bound = here / "mnt", here / "source", here / "bound"
    for folder in (mnt, source, bound):
        folder.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)], check=True)
    subprocess.run(["mount", "--bind", str(source), str(bound)], check=True)
    out = {}
    for name, folder in (("tmpfs", mnt), ("bind", bound)):
        try:
            _report_output.refuse_mount_points(("--output-dir", folder))
            out[name] = None
        except _report_output.Refused as exc:
            out[name] = str(exc)
    with _report_output.staged_report(mnt / "report", [Path("report.md")], "s") as staging:
        (staging / "report.md").write_text("# report")
    out["inside"] = (mnt / "report" / "report.md").read_text()
    def record_run(*folders):
        run = subprocess.run([sys.executable, "-m", "sacscale", "record-run", *folders, "--attic", str(here / "attic"),
                              "--timeout", "60", "--", sys.executable, "-c", "pass"], capture_output=True, text=True,
                             cwd=here, env={**os.environ, "PYTHONPATH": str(Path(sacscale.__file__).parents[1])})
        return [run.returncode, run.stderr.strip().splitlines()]
    out["record_run"] = record_run("--run-dir", str(mnt), "--work-dir", str(here / ".mnt.partial"))
    out["record_run_bind"] = record_run("--run-dir", str(here / "run"), "--work-dir", str(bound))
    out["record_run_left"] = sorted(os.listdir(here))
    print(json.dumps(out))
""")


def test_mount_points_refused_in_one_line(tmp_path):
    proc = subprocess.run(["unshare", "-m", "--propagation", "private", sys.executable, "-c", _SCENARIO,
                           str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    for name, folder in (("tmpfs", tmp_path / "mnt"), ("bind", tmp_path / "bound")):
        assert out[name] == (f"--output-dir {folder}: a mount point, which the report cannot be moved into (it is "
                             "made whole in a staging folder beside the report's folder and renamed in, and a rename "
                             "does not cross into another mount); nothing was written: write the report into a "
                             "folder inside the mount")
    assert out["inside"] == "# report"  # a folder inside the mount takes the report
    code, lines = out["record_run"]
    assert code == 2, lines
    assert lines == [f"sacscale record-run: --run-dir {tmp_path / 'mnt'}: a mount point, which record-run can "
                     "neither rename nor set aside (a completed work folder is renamed to the run folder's name, an "
                     "earlier attempt's moved to the attic); give a folder inside it (nothing was moved or started)"]
    code, lines = out["record_run_bind"]  # a bind mount of the same file system: only the mount table shows it
    assert code == 2, lines
    assert lines == [f"sacscale record-run: --work-dir {tmp_path / 'bound'}: a mount point, which record-run can "
                     "neither rename nor set aside (a completed work folder is renamed to the run folder's name, an "
                     "earlier attempt's moved to the attic); give a folder inside it (nothing was moved or started)"]
    assert out["record_run_left"] == ["bound", "mnt", "source"]
    shutil.rmtree(tmp_path, ignore_errors=True)
