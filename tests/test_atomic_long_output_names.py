"""An output whose own name is legal but near the file system's limit (240 + 5 bytes):
its temporary name, `.<stem>.tmp<pid>.<thread id><suffix>`, was longer than the limit, and
the write failed "File name too long", naming the output. The temporary name is now cut
to fit, with a digest of the whole name, and still found and removed once its writer died."""

import os
import subprocess
import sys

from sacscale.atomic import atomic_write_text, output_name, temporary_path


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_an_output_name_the_file_system_allows_is_written(tmp_path):
    out = tmp_path / ("b" * 240 + ".json")
    atomic_write_text(out, "{}")
    assert out.read_text() == "{}"
    assert os.listdir(tmp_path) == [out.name]


def test_the_longest_name_and_multibyte_names_are_written(tmp_path):
    for name in ("c" * 255, "é" * 127, "d" * 200 + "." + "e" * 54):
        atomic_write_text(tmp_path / name, "x")
    assert sorted(os.listdir(tmp_path)) == sorted(["c" * 255, "é" * 127, "d" * 200 + "." + "e" * 54])


def test_a_long_names_temporary_is_ours_apart_from_another_long_names_and_names_its_output(tmp_path):
    one, two = tmp_path / ("b" * 240 + "1.json"), tmp_path / ("b" * 240 + "2.json")
    tmp_one, tmp_two = temporary_path(one), temporary_path(two)
    assert len(tmp_one.name.encode()) <= 255 and tmp_one.name.startswith(".bbbb") and tmp_one.suffix == ".json"
    assert ".tmp" in tmp_one.name and tmp_one.name != tmp_two.name
    assert output_name(str(tmp_one)) == str(one)


def test_a_dead_writers_temporary_of_a_long_name_goes_with_the_next_write(tmp_path):
    out = tmp_path / ("b" * 240 + ".json")
    ours = temporary_path(out)
    stale = ours.with_name(ours.name.replace(f".tmp{os.getpid()}.", f".tmp{dead_pid()}."))
    ours.rename(stale)
    atomic_write_text(out, "{}")
    assert os.listdir(tmp_path) == [out.name]


def test_a_command_writes_a_long_output_name(tmp_path):
    topology = os.path.join(os.path.dirname(__file__), "parallel", "fixtures", "topology")
    out = tmp_path / ("b" * 240 + ".json")
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", "plan-matrix", "--lscpu",
                           os.path.join(topology, "h200x1.lscpu"), "--nvidia-smi-topo",
                           os.path.join(topology, "h200x1.topo"), "--output", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert os.listdir(tmp_path) == [out.name] and out.read_text().startswith("{")
