"""No traceback for bad input (docs/faults.md): every command given an unusable file (not
UTF-8, nested too deep, a directory, of another shape, a device that never ends, a FIFO
nobody writes), or an output it cannot write (a directory, under a file, a full disk),
prints one line naming the file and the problem and exits 2, leaving no partial file."""

import errno
import os
import threading
import time

import pytest

from sacscale.cli import main


@pytest.fixture
def files(tmp_path):
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe\x00\x01binary")
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "other.json").write_text('{"a": 1}')
    (tmp_path / "list.json").write_text("[1, 2]")
    (tmp_path / "folder").mkdir()
    (tmp_path / "fake.mjb").write_text("not a model")
    (tmp_path / "nan.json").write_text('{"run": "r", "config": "c", "steady_env_steps_per_s": NaN}')
    return tmp_path


def run(capsys, *argv):
    t0 = time.monotonic()
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's own refusals
        code = exc.code
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err
    return code, err, time.monotonic() - t0


CASES = {
    "aggregate-binary": (["aggregate", "{d}/binary.json", "--csv", "{d}/o.csv", "--json", "{d}/o.json"],
                         "metrics file {d}/binary.json: not UTF-8 text"),
    "aggregate-deep": (["aggregate", "{d}/deep.json", "--csv", "{d}/o.csv", "--json", "{d}/o.json"],
                       "metrics file {d}/deep.json: JSON nested too deep"),
    "aggregate-folder": (["aggregate", "{d}/folder", "--csv", "{d}/o.csv", "--json", "{d}/o.json"],
                         "metrics file {d}/folder: is a directory"),
    "aggregate-other": (["aggregate", "{d}/other.json", "--csv", "{d}/o.csv", "--json", "{d}/o.json"],
                        "metrics file {d}/other.json: not analyze-run's output"),
    "aggregate-list": (["aggregate", "{d}/list.json", "--csv", "{d}/o.csv", "--json", "{d}/o.json"],
                       "metrics file {d}/list.json: a JSON object was expected, got list"),
    "render-best-binary": (["render-best", "--evaluations", "{d}/binary.json", "--runs-dir", "{d}/folder",
                            "--output", "{d}/out/v.gif", "--record", "{d}/out/r.json"],
                           "evaluation {d}/binary.json: not UTF-8 text"),
    "render-best-deep": (["render-best", "--evaluations", "{d}/deep.json", "--runs-dir", "{d}/folder",
                          "--output", "{d}/out/v.gif", "--record", "{d}/out/r.json"],
                         "evaluation {d}/deep.json: JSON nested too deep"),
    "verify-env-plan-binary": (["verify-env", "--output", "{d}/env.json", "--plan", "{d}/binary.json"],
                               "plan {d}/binary.json: not UTF-8 text"),
    "verify-env-plan-other": (["verify-env", "--output", "{d}/env.json", "--plan", "{d}/other.json"],
                              "plan {d}/other.json: not a resolved run plan"),
    "plan-matrix-binary": (["plan-matrix", "--lscpu", "{d}/binary.json", "--nvidia-smi-topo", "{d}/other.json"],
                           "--lscpu {d}/binary.json: not UTF-8 text"),
    "plan-matrix-folder": (["plan-matrix", "--lscpu", "{d}/folder", "--nvidia-smi-topo", "{d}/other.json"],
                           "--lscpu {d}/folder: is a directory"),
    "plan-matrix-other": (["plan-matrix", "--lscpu", "{d}/other.json", "--nvidia-smi-topo", "{d}/other.json"],
                          "--lscpu {d}/other.json: not a recorded output of that tool"),
    "prepare-model-not-a-model": (["prepare-model", "--output-dir", "{d}/model", "--from-mjb", "{d}/fake.mjb"],
                                  "--from-mjb {d}/fake.mjb: not a loadable compiled MuJoCo model"),
    "evaluate-not-a-model": (["evaluate", "{d}/folder", "--output", "{d}/e.json", "--model", "{d}/fake.mjb"],
                             "--model {d}/fake.mjb: not a loadable compiled MuJoCo model"),
    "render-not-a-model": (["render", "{d}/folder", "--output", "{d}/v.gif", "--model", "{d}/fake.mjb"],
                           "--model {d}/fake.mjb: not a loadable compiled MuJoCo model"),
    "aggregate-nan": (["aggregate", "{d}/nan.json", "--csv", "{d}/o.csv", "--json", "{d}/o.json"],
                      "metrics file {d}/nan.json: holds NaN, which JSON does not define"),
    "aggregate-meta-deep": (["aggregate", "{d}/ok_metrics.json", "--csv", "{d}/o.csv", "--json", "{d}/o.json",
                             "--meta", "[" * 100_000], "--meta: JSON nested too deep"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_bad_input_file_is_one_line_naming_it(files, capsys, case):
    argv, message = CASES[case]
    (files / "ok_metrics.json").write_text('{"run": "r", "config": "c"}')
    code, err, took = run(capsys, *[a.format(d=files) for a in argv])
    assert code == 2 and message.format(d=files) in err, err
    assert len(err.splitlines()) == 1 and took < 60
    assert not [p for p in files.rglob("*") if ".tmp" in p.name]
    assert not (files / "model" / "g1_walk_flat.mjb").exists()


def test_dev_zero_is_refused_without_reading_it(files):
    """In a process of its own with a memory limit: a reader that does not bound what it
    reads would otherwise take all the machine's memory."""
    import resource
    import subprocess
    import sys

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))

    proc = subprocess.run([sys.executable, "-m", "sacscale.cli", "plan-matrix", "--lscpu", "/dev/zero",
                           "--nvidia-smi-topo", str(files / "other.json")], capture_output=True, text=True,
                          timeout=120, preexec_fn=limit)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stderr.strip() == "sacscale plan-matrix: error: --lscpu /dev/zero: not a plain file or a pipe"


def test_a_fifo_nobody_writes_and_an_endless_pipe_end_quickly(files, capsys):
    fifo = files / "lscpu.fifo"
    os.mkfifo(fifo)
    code, err, took = run(capsys, "plan-matrix", "--lscpu", str(fifo), "--nvidia-smi-topo", str(files / "other.json"))
    assert code == 2 and f"--lscpu {fifo}: " in err and took < 30

    def endless():  # a writer that never stops: the read ends at the size limit
        with open(fifo, "wb") as fh:
            try:
                while True:
                    fh.write(b"0,0,0,0\n" * 8192)
            except BrokenPipeError:
                pass

    writer = threading.Thread(target=endless, daemon=True)
    writer.start()
    time.sleep(0.2)
    code, err, took = run(capsys, "plan-matrix", "--lscpu", str(fifo), "--nvidia-smi-topo", str(files / "other.json"))
    assert code == 2 and f"--lscpu {fifo}: larger than" in err and took < 30


def test_a_stalled_pipe_is_read_for_a_bounded_time(tmp_path):
    from sacscale.pipeline.config_check import ConfigError, read_text

    read_end, write_end = os.pipe()
    try:
        os.write(write_end, b"CPU CORE SOCKET NODE\n")  # then nothing more, and never closed
        t0 = time.monotonic()
        with pytest.raises(ConfigError, match="nothing more to read for 1 s"):
            read_text(f"/proc/self/fd/{read_end}", "--lscpu", streams=True, wait_s=1.0)
        assert time.monotonic() - t0 < 10
    finally:
        os.close(read_end)
        os.close(write_end)


@pytest.mark.parametrize("where", ["folder", "under-a-file", "disk-full"])
def test_an_output_that_cannot_be_written_is_one_line_and_leaves_nothing(files, capsys, monkeypatch, where):
    (files / "m.json").write_text('{"run": "r1", "config": "c", "env_steps_per_s": 1.0, "repeat": 1}')
    out = {"folder": files / "folder", "under-a-file": files / "other.json" / "o.csv",
           "disk-full": files / "o.csv"}[where]
    if where == "disk-full":
        def full(fd):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(out))

        monkeypatch.setattr("sacscale.atomic.os.fsync", full)
    code, err, _ = run(capsys, "aggregate", str(files / "m.json"), "--csv", str(out), "--json", str(files / "s.json"))
    reason = {"folder": "is a folder, not a file", "under-a-file": "a directory is needed",
              "disk-full": "disk full"}[where]
    assert code == 2 and reason in err and len(err.splitlines()) == 1, err
    assert not [p for p in files.rglob("*") if ".tmp" in p.name]


def test_an_unexpected_error_is_one_line_and_the_traceback_on_request(capsys, monkeypatch):
    from sacscale.commands import manifest

    def broken(args):
        raise AttributeError("'NoneType' object has no attribute 'x'\x1b[2J")

    monkeypatch.setattr(manifest, "run", broken)
    code, err, _ = run(capsys, "manifest", "somewhere")
    assert code == 1 and len(err.splitlines()) == 1
    assert "AttributeError" in err and "SACSCALE_TRACEBACK=1" in err and "\x1b" not in err
    monkeypatch.setenv("SACSCALE_TRACEBACK", "1")
    with pytest.raises(AttributeError):
        main(["manifest", "somewhere"])
