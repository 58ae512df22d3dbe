"""Outputs the disk refuses (docs/faults.md row 21): on a
read-only file system and on a full one (small tmpfs mounts in a private mount namespace,
`unshare -m`, root only: root ignores permission bits, not a read-only mount; one out of
inodes), each
command prints one line naming the output the user gave (not a temporary name), exits 2
and leaves no partial file: a report's figure, the model's .mjb (MuJoCo's own writer
ignored the full disk and left a truncated model), the video."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SET = REPO / "results" / "h200x1"


def _can_unshare() -> bool:
    return shutil.which("unshare") is not None and subprocess.run(
        ["unshare", "-m", "true"], capture_output=True).returncode == 0


pytestmark = pytest.mark.skipif(not _can_unshare(), reason="needs root for a private mount namespace (unshare -m)")

# inside the namespace: mount the disk, run the command, list what is left on it
SCRIPT = """
import json, os, subprocess, sys
disk, kind, cmd = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
os.makedirs(disk, exist_ok=True)
inodes = ",nr_inodes=16" if kind == "inodes" else ""
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k" + inodes, "tmpfs", disk], check=True)
if kind == "inodes":
    try:
        for n in range(16):
            os.close(os.open(os.path.join(disk, f"filler{n}"), os.O_WRONLY | os.O_CREAT))
    except OSError:
        pass
elif kind == "full":
    fd = os.open(os.path.join(disk, "filler"), os.O_WRONLY | os.O_CREAT)
    for chunk in (4096, 1):
        try:
            while True:
                os.write(fd, b"\\0" * chunk)
        except OSError:
            pass
    os.close(fd)
else:
    subprocess.run(["mount", "-o", "remount,ro", disk], check=True)
proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
left = sorted(os.path.relpath(os.path.join(d, f), disk) for d, _, fs in os.walk(disk)
              for f in fs if not f.startswith("filler"))
dirs = sorted(os.path.relpath(os.path.join(d, s), disk) for d, ss, _ in os.walk(disk) for s in ss)
print(json.dumps({"rc": proc.returncode, "err": proc.stderr.strip(), "left": left, "dirs": dirs}))
"""


def on_disk(tmp_path, kind: str, argv: list[str]) -> dict:
    disk = tmp_path / "disk"
    cmd = [sys.executable, "-m", "sacscale.cli", *[a.replace("DISK", str(disk)) for a in argv]]
    proc = subprocess.run(["unshare", "-m", "--propagation", "private", sys.executable, "-c", SCRIPT, str(disk),
                           kind, json.dumps(cmd)], capture_output=True, text=True, timeout=400, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "Traceback" not in out["err"] and "\n" not in out["err"], out
    return out


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    sys.path.insert(0, str(REPO / "tests" / "eval"))
    try:
        from test_render import make_checkpoint
    finally:
        sys.path.remove(str(REPO / "tests" / "eval"))
    return make_checkpoint(tmp_path_factory.mktemp("ckpt") / "final.pt")


@pytest.mark.parametrize("kind, says", [("full", "cannot record its holder (No space left on device)"),
                                        ("ro", "cannot open it (Read-only file system)")])
def test_a_report_names_its_folder_and_leaves_no_partial_file(tmp_path, kind, says):
    # the report's first write is the lock beside its folder (the report itself is staged)
    out = on_disk(tmp_path, kind, ["report", "--run-set", str(SET), "--output-dir", "DISK/rep"])
    assert out["rc"] == 2, out
    disk = tmp_path / "disk"
    assert out["err"].startswith(f"sacscale report: {disk}/rep: cannot lock the folder to write the report (lock "
                                 f"file {disk}/.rep.lock: {says}"), out
    assert out["left"] == [], out  # no .throughput_by_repeat.png.tmp.png, no lock file


def test_prepare_model_on_a_full_disk_names_the_model_and_leaves_none(tmp_path):
    # its first write is the lock beside its folder (the model and its record are staged): the
    # disk's refusal of it is named as the output's own write would be
    out = on_disk(tmp_path, "full", ["prepare-model", "--output-dir", "DISK/model"])
    assert out["rc"] == 2, out
    disk = tmp_path / "disk"
    assert out["err"] == f"sacscale prepare-model: error: {disk}/model: no space left on the device (disk full)"
    assert out["left"] == [], out  # was a truncated g1_walk_flat.mjb


@pytest.mark.parametrize("kind, says", [("full", "no space left on the device (disk full)"),
                                        ("ro", "read-only file system")])
def test_a_video_the_disk_refuses_is_named_exit_2(tmp_path, checkpoint, kind, says, gl):
    out = on_disk(tmp_path, kind, ["render", str(checkpoint), "--output", "DISK/walk.webp", "--seconds", "0.2",
                                   "--width", "32", "--height", "24", "--fps", "10"])
    assert out["rc"] == 2, out
    assert out["err"] == f"sacscale render: error: {tmp_path / 'disk'}/walk.webp: {says}"
    assert out["left"] == [], out


def test_a_read_only_output_is_named_as_given_not_by_its_temporary_name(tmp_path):
    metrics = sorted((SET / "metrics").glob("*.json"))[:2]
    out = on_disk(tmp_path, "ro", ["aggregate", *map(str, metrics), "--csv", "DISK/s.csv", "--json", "DISK/s.json"])
    assert out["rc"] == 2, out
    assert out["err"] == f"sacscale aggregate: error: {tmp_path / 'disk'}/s.csv: read-only file system"


@pytest.mark.parametrize("kind, folder, says", [
    ("inodes", "", "no space left on the device (disk full)"),  # the lock file's create refused
    ("inodes", "sub/", "no space left on the device (disk full)"),  # the lock's folder's mkdir refused
    ("ro", "sub/", "read-only file system")])  # a folder to be made on a read-only disk
def test_a_lock_the_disk_refuses_is_named_as_the_outputs_write(tmp_path, kind, folder, says):
    # the first write is the lock beside the output: refused, it was named as the lock
    # (`cannot lock it to write it (lock file ...)`), not as the write the user asked for
    metrics = sorted((SET / "metrics").glob("*.json"))[:2]
    out = on_disk(tmp_path, kind, ["aggregate", *map(str, metrics), "--csv", f"DISK/{folder}s.csv",
                                   "--json", f"DISK/{folder}s.json"])
    assert out["rc"] == 2, out
    assert out["err"] == f"sacscale aggregate: error: {tmp_path / 'disk'}/{folder}s.csv: {says}"
    assert out["left"] == [] and out["dirs"] == [], out  # no lock file, no folder made for it
