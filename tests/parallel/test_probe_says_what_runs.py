"""The correctness probe says what it runs before its ranks start: a probe of many iterations
said nothing until it ended."""

from sacscale.cli import main


def test_the_start_line_comes_before_the_ranks(tmp_path, capsys, monkeypatch):
    def stopped_at_the_ranks(settings, output, timeout_s):
        said = capsys.readouterr().err
        assert said == ("probe learner: 2 rank(s) on cpu,cpu, 1,000,000 iteration(s) compared with a "
                        "single-process reference ...\n")
        raise RuntimeError("stopped here by the test")

    monkeypatch.setattr("sacscale.parallel.probe.run_probe", stopped_at_the_ranks)
    rc = main(["probe", "correctness", "--devices", "cpu,cpu", "--iterations", "1000000",
               "--output", str(tmp_path / "c.json")])
    assert rc == 1
    assert capsys.readouterr().err == "sacscale probe: error: stopped here by the test\n"
