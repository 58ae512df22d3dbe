"""verify run while a report of the set was written again in place read pages half old, half
new, and ended 1 naming each one `changed while verify read it`, as a broken set does. Now a
set whose report folder or manifest another command holds locked, when verify starts or when
it ends with problems, is refused with one line naming the holder, exit 2."""

from cli_runs import one_line, sacscale
from paused_runs import finished, lock_held_elsewhere, started_paused


def reports_of(root):
    return root.parent.parent / "reports" / root.name


REPORT = "a report of this set is being written into it"
MANIFEST = "another sacscale manifest or verify is writing into this run set"


def refusal(folder, writer):
    return f"sacscale verify: error: {folder}: {writer} (pid "


def test_verify_is_refused_while_a_report_of_the_set_is_written(work):
    with lock_held_elsewhere(reports_of(work)):
        proc = sacscale("verify", work)
    one_line(proc, refusal(reports_of(work), REPORT))
    assert f"holds {reports_of(work).parent}/.{work.name}.lock); verify the set again once that ends" in proc.stderr


def test_verify_is_refused_while_a_manifest_of_the_set_is_written(work):
    with lock_held_elsewhere(work):
        proc = sacscale("verify", work)
    one_line(proc, refusal(work, MANIFEST))


def test_a_report_written_while_verify_reads_is_named_as_such(work, tmp_path):
    """The report starts after verify's first look and has taken a page away when verify reads; the
    writer still holding its lock at the end is named instead of the evidence problems."""
    paused = started_paused(tmp_path, "sacscale.evidence.verify:verify", "verify", work)
    with lock_held_elsewhere(reports_of(work)):
        (reports_of(work) / "report.html").unlink()
        done = finished(tmp_path, paused)
    one_line(done, refusal(reports_of(work), REPORT))


def test_the_set_verifies_once_the_writer_has_ended(work):
    with lock_held_elsewhere(reports_of(work)):
        pass
    proc = sacscale("verify", work)
    assert proc.returncode == 0, proc.stderr
