"""An output named in /dev or /proc, or leading there through a link, is no file: root's
`verify S --output /dev/stdout` replaced the machine's /dev/stdout link with a plain file (the
outputs are written beside their name and renamed onto it)."""

import os
from pathlib import Path

import pytest

from cli_runs import one_line, sacscale

from sacscale.cli import main

SET = Path(__file__).resolve().parents[1] / "results" / "h200x1_shared_short"


@pytest.mark.parametrize("output", ["/proc/self/fd/1", "link"])
def test_an_output_that_is_a_stream_of_the_system_is_refused(capsys, tmp_path, output):
    if output == "link":  # a link of ours that leads to the process's standard output
        os.symlink("/proc/self/fd/1", tmp_path / "out.json")
        output = str(tmp_path / "out.json")
    with pytest.raises(SystemExit) as exited:
        main(["verify", str(SET), "--no-metrics", "--output", output])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and f"argument --output: {output} is a device or a stream of the system" in err, err
    if output.endswith("out.json"):
        assert os.path.islink(output)


@pytest.mark.parametrize("root", ["/", "/proc", "/sys/kernel", "/dev/.."])
def test_manifest_of_the_file_systems_root_or_a_kernel_folder_is_refused(root):
    """`manifest /` walked the whole machine until a process's /proc entry vanished, and said
    only `/proc/23375: no such file or directory`."""
    done = sacscale("manifest", root)
    one_line(done, f"sacscale manifest: error: {root}: the file system's root or a kernel folder, not a run set's "
                   "folder; give the set's folder (results/<run set>)")
