"""`manifest`'s own pair, --output and --json, written by one command at a time. Two manifests
of different sets given the same pair each held only their own set's lock, both exited 0
and could leave one set's MANIFEST.sha256 beside the other's manifest.json. Now the outputs
named outside the set are held as every command's outputs are (`.<name>.lock` beside each)
and a second manifest given either is refused at once, naming the output and the holder.
The first is stopped between its two writes (paused_sacscale.py) while the second runs."""

import hashlib
import json
from pathlib import Path

from cli_runs import one_line, sacscale
from paused_runs import finished, started_paused


def a_set(folder: Path, files: int) -> Path:
    folder.mkdir()
    for i in range(files):
        (folder / f"f{i}.txt").write_text(f"{i}\n")
    return folder


def test_a_second_manifest_into_the_same_pair_is_refused(tmp_path):
    first_set, second_set = a_set(tmp_path / "a", 2), a_set(tmp_path / "b", 3)
    out = tmp_path / "out"
    listing, record = out / "m.sha256", out / "m.json"
    first = started_paused(tmp_path, "sacscale.evidence.manifest:write_json", "manifest", first_set,
                           "--output", listing, "--json", record)
    second = sacscale("manifest", second_set, "--output", tmp_path / "other.sha256", "--json", record)
    one_line(second, f"sacscale manifest: error: --json {record}: another sacscale command is writing this output "
                     f"(pid {first.pid} holds {out}/.m.json.lock); nothing was written: run this one once it has "
                     "finished, or write it elsewhere")
    assert not (tmp_path / "other.sha256").exists()
    done = finished(tmp_path, first)
    assert done.returncode == 0, done.stderr
    written = json.loads(record.read_text())
    assert written["files"] == 2 == len(listing.read_text().splitlines())
    assert written["manifest_sha256"] == hashlib.sha256(listing.read_bytes()).hexdigest()
    assert sorted(p.name for p in out.iterdir()) == ["m.json", "m.sha256"]  # the locks gone with the first


def test_the_default_outputs_inside_the_set_get_no_lock_file_listed(tmp_path):
    """The set's own MANIFEST.sha256 and manifest.json are under the set's lock: no lock file
    of theirs beside them, which the manifest would list."""
    root = a_set(tmp_path / "s", 2)
    done = sacscale("manifest", root, "--output", root / "MANIFEST.sha256", "--json", root / "manifest.json")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in root.iterdir()) == ["MANIFEST.sha256", "f0.txt", "f1.txt", "manifest.json"]
    assert ".lock" not in (root / "MANIFEST.sha256").read_text()
