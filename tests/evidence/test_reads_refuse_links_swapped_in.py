"""Every read of a set's files opens it without following a link and without blocking:
a link (to /etc/shadow, say) or a FIFO that another user swaps in after verify's lstat walk
is refused at the read, in one line, not followed."""

import os
import signal

import pytest

from sacscale.evidence.result import EvidenceStructureError, load_json, read_text
from sacscale.reading import NotRegularFile, read_limited


@pytest.fixture
def set_root(tmp_path):
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "report.md").write_text("# report\n")
    (tmp_path / "secret").write_text("root::20228:0:99999:7:::\n")
    return tmp_path


@pytest.fixture(autouse=True)
def no_hang():
    signal.alarm(20)  # a FIFO opened blocking would wait for a writer forever
    yield
    signal.alarm(0)


def test_a_file_swapped_for_a_link_is_refused(set_root):
    page = set_root / "reports" / "report.md"
    page.unlink()
    page.symlink_to(set_root / "secret")
    with pytest.raises(EvidenceStructureError, match=r"^reports/report\.md: the file is a symbolic link") as err:
        read_text(page, "reports/report.md")
    assert "root::" not in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(NotRegularFile, match="symbolic link"):
        read_limited(page)


def test_a_folder_swapped_for_a_link_is_refused(set_root, tmp_path_factory):
    other = tmp_path_factory.mktemp("other")
    (other / "report.md").write_text("# someone else's\n")
    os.rename(set_root / "reports", set_root / "reports.old")
    (set_root / "reports").symlink_to(other)
    with pytest.raises(EvidenceStructureError, match=r"^reports/report\.md: its folder 'reports' is a symbolic link"):
        read_text(set_root / "reports" / "report.md", "reports/report.md")


def test_a_fifo_is_refused_without_blocking(set_root):
    os.mkfifo(set_root / "evidence.json")
    with pytest.raises(EvidenceStructureError, match=r"^evidence\.json: not a regular file"):
        load_json(set_root, "evidence.json")
    with pytest.raises(NotRegularFile):
        read_limited(set_root / "evidence.json")


def test_a_regular_file_reads_as_before(set_root):
    assert read_text(set_root / "reports" / "report.md", "reports/report.md") == "# report\n"
    assert read_limited(set_root / "secret", within=set_root).startswith(b"root")
