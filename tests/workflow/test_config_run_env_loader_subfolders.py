"""The library folders of a run env judged as deep as the dynamic loader may search them.
Before, only a library folder's own entries and its `glibc-hwcaps/` were judged, but glibc
before 2.37 (2.36 here) also searches the legacy hardware-capability subfolders (`tls/`,
`x86_64/`, `haswell/`, `avx512_1/` and their combinations, `tls/x86_64/x86_64/`): a library
every user may write in `x86_64/` planned and the loader loaded it first. Which names and how
many levels differ by processor, so every folder below a library folder is judged."""

import pytest
from run_env_plans import WHERE, plan, refused

TAIL = "so that user's code would run in the run: name a folder of your own"
LOADER = "the dynamic loader loads shared libraries from it"
WRITABLE = "which is writable by other users (mode 0666)"


def _open_library(folder):
    folder.mkdir(parents=True)
    library = folder / "libselinux.so.1"
    library.write_bytes(b"\x7fELF")
    library.chmod(0o666)


LEGACY = ["x86_64", "tls", "tls/x86_64/x86_64", "haswell/avx512_1", "tls/haswell/x86_64/avx512_1"]


@pytest.mark.parametrize("below", LEGACY)
def test_a_library_others_may_write_in_a_legacy_hwcaps_subfolder_is_refused(tmp_path, below):
    libs = tmp_path / "ll"
    libs.mkdir()
    plan({"LD_LIBRARY_PATH": str(libs)})
    _open_library(libs / below)
    assert refused({"LD_LIBRARY_PATH": str(libs)}) == (
        f"{WHERE}: LD_LIBRARY_PATH: '{libs}' holds '{below}/libselinux.so.1', {WRITABLE}; {LOADER}, {TAIL}")


@pytest.mark.parametrize("name", ["LD_RUN_PATH", "LIBRARY_PATH"])
def test_the_other_library_path_variables_are_judged_as_deep(tmp_path, name):
    libs = tmp_path / "ll"
    _open_library(libs / "tls" / "x86_64")
    assert refused({name: str(libs)}).startswith(
        f"{WHERE}: {name}: '{libs}' holds 'tls/x86_64/libselinux.so.1', {WRITABLE}; ")
