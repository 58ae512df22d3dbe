"""A MemoryError anywhere in verify ended it with the CLI's `input too large for memory`,
naming nothing and dropping every finding made before. Now a run whose events cannot be
held is named and the other runs still checked; a cross-check that runs out of memory is
named with where it stopped, and what came before it kept."""

import subprocess
import sys

from sacscale.cli import main
from sacscale.evidence import verify as verify_module
from sacscale.evidence.verify import verify
from set_copies import edit_record

RUN = "shared_r1_n1_pool7"


def test_a_run_too_large_to_recompute_is_named_and_the_others_checked(work, monkeypatch):
    analyze_run = verify_module.analyze_run

    def short_of_memory(run_dir):
        if run_dir.name == RUN:
            raise MemoryError
        return analyze_run(run_dir)

    monkeypatch.setattr(verify_module, "analyze_run", short_of_memory)
    result = verify(work)
    named = (f"metric: {RUN}: cannot recompute: its event files hold more values than this machine's memory "
             "holds at once")
    assert named in result.problems()
    assert result.runs_checked == len(list((work / "runs").iterdir()))


def test_a_cross_check_out_of_memory_is_named_and_earlier_findings_kept(work, monkeypatch, capsys):
    edit_record(work, f"metrics/{RUN}.json", lambda record: record.update(steady_env_steps_per_s=1.0))

    def short_of_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(verify_module, "check_bindings", short_of_memory)
    assert main(["verify", str(work)]) == 1
    err = capsys.readouterr().err
    assert f"{RUN}: steady_env_steps_per_s: stored 1.0, recomputed" in err
    assert "verify ran out of memory in " in err  # the last of sacscale's functions it was in
    assert (": the set holds more values than this machine's memory holds at once, or the machine has too little "
            "memory left for verify itself; the checks after it were not done") in err


def test_out_of_memory_before_the_cross_checks_keeps_what_the_hashes_found(work, monkeypatch):
    (work / "summary.csv").write_text((work / "summary.csv").read_text() + "\n")

    def short_of_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(verify_module, "check_coverage", short_of_memory)
    result = verify(work)
    assert any(p.startswith("changed: summary.csv") for p in result.problems()), result.problems()
    assert any("verify ran out of memory in " in p for p in result.problems()), result.problems()


def test_a_small_record_is_read_in_little_memory(tmp_path):
    """Reading a record of a few bytes asked for its whole limit (64 MB) at once, so verify ran
    out of memory on the smallest JSON under a memory limit the records fit in many times."""
    record = tmp_path / "r.json"
    record.write_text('{"a": 1}')
    code = ("import resource, sys\n"
            "from sacscale.reading import read_limited\n"
            "size = next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmSize'))\n"
            "resource.setrlimit(resource.RLIMIT_AS, ((size + 24 * 1024) * 1024,) * 2)\n"
            "print(read_limited(sys.argv[1]).decode())\n")
    done = subprocess.run([sys.executable, "-c", code, str(record)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == '{"a": 1}', done.stderr


def test_out_of_memory_loading_verifys_own_code_is_not_charged_to_the_set(work, monkeypatch, capsys, tmp_path):
    """A MemoryError while a module was imported on the way (verify's own code, 1.3 MB of set)
    was named as the set's problem, exit 1, as a forged set's would be; nor is a verdict
    recorded for a set that was not judged."""
    (tmp_path / "heavy_module_for_test.py").write_text("raise MemoryError\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    def loads_a_module(*args, **kwargs):
        __import__("heavy_module_for_test")

    monkeypatch.setattr(verify_module, "check_bindings", loads_a_module)
    verdict = tmp_path / "verify.json"
    assert main(["verify", str(work), "--output", str(verdict)]) == 1
    err = capsys.readouterr().err
    assert err.strip() == ("sacscale verify: error: verify ran out of memory loading its own code (importing "
                           "heavy_module_for_test) before it had judged the set; free memory (or raise the limit) and "
                           "run it again"), err
    assert not verdict.exists()


def test_a_library_that_cannot_load_records_no_verdict(work, monkeypatch, capsys, tmp_path):
    """A library that cannot be mapped under a memory limit (`ImportError: libtorch_cpu.so:
    failed to map segment`) was recorded as a failed verification of the set (`ok: false,
    files_checked: 0` in --output)."""
    def cannot_load(*args, **kwargs):
        raise ImportError("libtorch_cpu.so: failed to map segment from shared object")

    monkeypatch.setattr(verify_module, "check_bindings", cannot_load)
    verdict = tmp_path / "verify.json"
    assert main(["verify", str(work), "--output", str(verdict)]) == 1
    err = capsys.readouterr().err
    assert err.strip() == ("sacscale verify: error: verify could not load its own code (libtorch_cpu.so: failed to "
                           "map segment from shared object) before it had judged the set; nothing was recorded"), err
    assert not verdict.exists()


class _OutOfMemoryImporting:
    """A module finder that runs out of memory finding `name`, as an import under a memory
    limit does while pandas or scipy load on the way."""

    def __init__(self, name: str):
        self.name = name

    def find_spec(self, fullname, path=None, target=None):
        if fullname == self.name:
            raise MemoryError
        return None


def test_out_of_memory_importing_verify_itself_records_no_verdict(work, monkeypatch, capsys, tmp_path):
    """The MemoryError of the import of verify's own module, before verify ran, recorded a
    failed verification (`ok: false` in --output) and ended `input too large for memory`, exit 2."""
    monkeypatch.delitem(sys.modules, "sacscale.evidence.verify")
    monkeypatch.setattr(sys, "meta_path", [_OutOfMemoryImporting("sacscale.evidence.verify"), *sys.meta_path])
    verdict = tmp_path / "verify.json"
    assert main(["verify", str(work), "--output", str(verdict)]) == 1
    err = capsys.readouterr().err
    assert err.strip() == ("sacscale verify: error: verify ran out of memory loading its own code (importing "
                           "sacscale.evidence.verify) before it had judged the set; free memory (or raise the limit) "
                           "and run it again"), err
    assert not verdict.exists()
