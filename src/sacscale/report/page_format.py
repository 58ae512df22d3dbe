"""The format of the report's page: what the report stage writes for given evidence.

verify composes the page again from a set's evidence with the report stage's own code and
compares what a reader sees, line by line. That holds only where this code writes the page
as the code that made it did, so a set records the page format of the code that made it
(evidence.json `report_page`), and any change to what the page says for the same evidence
raises PAGE_FORMAT (tests/report/test_page_format.py pins the page of a committed set to it).
A set of another format keeps the checks that do not depend on the page's words.

Format 1 wrote the metric definitions as raw Markdown (`'Reward/<term>'` reached the HTML as
a tag, and a browser hid the word); format 2 writes them as text. This code still writes
format 1 where asked, so the sets that recorded it keep their whole page compared. Format 2
also says of a passing probe of one rank that no gradient sync between ranks was tested (so
does format 1 as composed here: the one set that recorded it probed two ranks). Format 3
says in the page's first line too that a probe of fewer ranks than the set's runs train
passed for those ranks only (formats 1 and 2 said "the correctness probe passed"), and of
a CPU set that its ranks are CPU ranks (formats 1 and 2 took two CPU ranks for ranks
sharing one GPU in the Verdict's claim line).
"""

PAGE_FORMAT = 3
PAGE_FORMATS_WRITTEN = (1, 2, 3)  # the formats build() composes (its page_format)
