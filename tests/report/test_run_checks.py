"""The verdict's end-of-run line: what each run's train_meta.json says of its ranks and of
the non-finite data its learner dropped."""

import json

from sacscale.report.run_checks import run_checks_line


def _runs(tmp_path, metas: dict) -> list:
    dirs = []
    for name, meta in metas.items():
        d = tmp_path / name
        d.mkdir()
        if meta is not None:
            (d / "train_meta.json").write_text(json.dumps(meta))
        dirs.append(d)
    return dirs


CLEAN = {"world_size": 2, "ranks_identical": True, "nonfinite_rows": 0, "nonfinite_targets": 0}


def test_clean_runs_say_so_with_their_counts(tmp_path):
    line = run_checks_line(_runs(tmp_path, {"a_r1_n2": CLEAN, "a_r1_n1": {**CLEAN, "world_size": 1}}))
    assert line == ("the ranks' final learner states identical in 1 of 1 multi-rank runs; 0 non-finite "
                    "transitions dropped and 0 non-finite critic targets in 2 of 2 runs.")


def test_a_run_with_nonfinite_data_is_named_with_its_counts(tmp_path):
    line = run_checks_line(_runs(tmp_path, {"a_r1_n2": {**CLEAN, "nonfinite_rows": 1234, "nonfinite_targets": 2},
                                            "a_r2_n2": CLEAN}))
    assert "**non-finite data** in 1 of 2 runs (`a_r1_n2`: 1,234 transition(s) dropped, 2 critic target(s)" in line


def test_the_sources_of_nonfinite_targets_are_named(tmp_path):
    sources = {"reward": 0, "termination": 0, "next_logp": 2, "next_value": 1, "<b>x</b>": 3, "flag": True}
    line = run_checks_line(_runs(tmp_path, {"a_r1_n1": {**CLEAN, "world_size": 1, "nonfinite_targets": 2,
                                                        "nonfinite_target_sources": sources}}))
    assert "2 critic target(s) given no mass (not finite: `next_logp` 2, `next_value` 1, " in line
    assert "`<b>x</b>` 3)" in line  # a name from the file is a code span, as every other: shown, never run
    assert "flag" not in line  # a count that is not a number is not one


def test_ranks_that_differ_are_named(tmp_path):
    line = run_checks_line(_runs(tmp_path, {"a_r1_n2": {**CLEAN, "ranks_identical": False}, "a_r2_n2": CLEAN}))
    assert line.startswith("**the ranks' final learner states differ** in `a_r1_n2` (1 of 2 multi-rank runs")


def test_older_sets_and_unreadable_records_say_what_was_not_checked(tmp_path):
    (tmp_path / "bad").mkdir()
    dirs = _runs(tmp_path / "bad", {"x_r1_n2": {"world_size": 2}, "x_r2_n2": None})
    (dirs[1] / "train_meta.json").write_text("{not json")
    assert run_checks_line(dirs) == ("the ranks' final states were not compared (a set made before that check); "
                                     "non-finite data not counted (a set made before that check).")
    assert run_checks_line([]) is None


def test_a_run_name_with_markup_stays_text(tmp_path):
    line = run_checks_line(_runs(tmp_path, {"r`<img src=x onerror=alert(1)>": {**CLEAN, "nonfinite_rows": 1}}))
    assert "``r`<img src=x onerror=alert(1)>``" in line  # a code span longer than the name's backtick run


def test_ranks_apart_without_gradient_sync_are_expected_not_flagged(tmp_path):
    nosync = {**CLEAN, "ranks_identical": False, "config": {"grad_sync": "off"}}
    line = run_checks_line(_runs(tmp_path, {"a_r1_n2": CLEAN, "a_r1_n2_nosync": nosync}))
    assert line.startswith("the ranks' final learner states identical in 1 of 1 multi-rank runs; 1 of 1 runs "
                           "without gradient sync ended with ranks apart, as they should (`a_r1_n2_nosync`")
    assert "**" not in line
    # with the sync on, apart is still a failure, named
    synced_apart = {**CLEAN, "ranks_identical": False, "config": {"grad_sync": "auto"}}
    (tmp_path / "x").mkdir()
    assert run_checks_line(_runs(tmp_path / "x", {"b": synced_apart})).startswith(
        "**the ranks' final learner states differ** in `b`")
