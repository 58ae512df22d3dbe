"""A MemoryError anywhere in verify ended it with the CLI's `input too large for memory`,
naming nothing and dropping every finding made before. Now a run whose events cannot be
held is named and the other runs still checked; a cross-check that runs out of memory is
named with where it stopped, and what came before it kept."""

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
    assert ": the set holds more values than this machine's memory holds at once; the checks after it were not done" \
        in err
