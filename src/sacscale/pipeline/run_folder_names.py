"""The names record-run gives a run's folders besides the run folder itself: the work
folder it trains in (`.<run>.partial`), the attempts it sets aside in the attic
(`<run>.<why>-<stamp>`), and the locks beside them (`.<folder>.lock`, the trainer's
`.<folder>.trainer-lock`). A name the config gives (a run configuration, the prefix, the
run set) that holds one of these forms would plan a run named as another run's attempt
or work folder: the attempts list and verify could not tell the two apart."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from sacscale.lock_names import WORK_SUFFIX
from sacscale.long_names import name_that_fits
from sacscale.locks import LOCK, TRAINER_LOCK

# why an attempt was set aside: the word in its name in the attic, `<run>.<why>-<stamp>`
SET_ASIDE_AS = ("failed", "interrupted", "timed_out", "superseded")
STAMP_FORMAT = "%Y%m%dT%H%M%S.%fZ"
STAMP_PATTERN = r"\d{8}T\d{6}\.\d{6}Z"  # what stamp() writes
# before the digest of a run's name cut to fit a set-aside name: a form no run name may hold,
# so an attempt of a long-named run never reads as one of the run its cut name would spell
CUT_MARK = "cut-"


def stamp() -> str:
    """Now, as the suffix of a folder set aside (`.superseded-STAMP`, `.failed-STAMP`)."""
    return datetime.now(UTC).strftime(STAMP_FORMAT)


def set_aside_name(run: str, why: str, into: Path) -> str:
    """`<run>.<why>-<stamp>`, the name a folder set aside is given in `into`; a run's name
    too long for that (a legal name of some 230 bytes) is cut, with a digest of it, so that
    the name fits (otherwise the move failed after the run and the attempt was lost), as
    `<run cut>.cut-<digest>`, a name no run is given."""
    return name_that_fits(into, "", run, f".{why}-{stamp()}", CUT_MARK)


# each form (a regular expression) with the folder record-run names so; a suffix counts at
# the end of a name or before a further '.' suffix, an attempt's stamp wherever it stands
_OWN_FORMS = {
    re.escape(WORK_SUFFIX) + r"(?=\.|\Z)": f"the folder a run trains in (.<run>{WORK_SUFFIX})",
    re.escape(TRAINER_LOCK) + r"(?=\.|\Z)": f"a trainer's lock of its run folder (.<folder>{TRAINER_LOCK})",
    re.escape(LOCK) + r"(?=\.|\Z)": f"the lock beside a run's folder (.<folder>{LOCK})",
    rf"\.(?:{'|'.join(SET_ASIDE_AS)})-{STAMP_PATTERN}": "an attempt set aside in the attic (<run>.<why>-<stamp>)",
    rf"\.{CUT_MARK}[0-9a-f]{{16}}(?=\.|\Z)": f"a run's name cut to fit in the attic (<run cut>.{CUT_MARK}<digest>)",
}


def record_run_form(name: str) -> str | None:
    """Why `name` would read as one of record-run's own folder names (the form it holds and
    the folder record-run names so), or None."""
    for form, folder in _OWN_FORMS.items():
        found = re.search(form, name)
        if found:
            return f"{found.group()!r} is record-run's own suffix for {folder}"
    return None
