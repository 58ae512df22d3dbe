"""A set's JSON record nested 200,000 deep (the manifest made again over it). Before:
verify ended rc 2 with `sacscale verify: error: input nested too deep`, naming no file.
Now the record is a named problem of the set (rc 1), its file named."""

import subprocess
import sys

import pytest
from set_copies import copy_committed_set, remake_manifest

DEEP = "[" * 200_000 + "]" * 200_000


@pytest.mark.parametrize("rel, kind", [("environment.json", "structure"), ("evidence.json", "scope"),
                                       ("runs/shared_r1_n1_pool7/run.json", "structure")])
def test_a_record_nested_too_deep_is_named_with_its_file(tmp_path, rel, kind):
    root = copy_committed_set(tmp_path, "h200x1_shared_short")
    (root / rel).write_text(DEEP)
    remake_manifest(root)
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", "verify", str(root)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 1, done.stderr
    assert f"  {kind}: {rel}: not valid JSON (JSON nested too deep)" in done.stderr.splitlines(), done.stderr
