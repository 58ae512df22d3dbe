"""Which run set a path names: its one canonical name, and the folders that are no set (a
report folder, a folder inside a set, a folder of sets), each named with the set to verify
instead. In a module of its own so that `sacscale verify` refuses a path that names no set
before loading what the checks need (pandas, scipy, matplotlib)."""

from __future__ import annotations

import os
from pathlib import Path

from sacscale.evidence.manifest import MANIFEST_NAME, ManifestError, parse_manifest
from sacscale.finished_sets import set_checkouts


class NotARunSet(ManifestError):
    """The path given for a set names none (no such folder, a file, a report folder, a folder
    of sets): the caller's wrong path, not a set's damaged evidence."""


def reports_dir(root: Path) -> Path | None:
    """reports/S/ for results/S/ (None when the root is not laid out so)."""
    if root.parent.name != "results":
        return None
    return root.parent.parent / "reports" / root.name


def canonical_root(root: str | Path) -> Path:
    """The set's one name: absolute, `..` and `.` gone, links in the path resolved. Every
    spelling of a set (relative, with `..`, through a link) is checked as this path, so none
    can skip the report or the tree checks that depend on where the set lies. Only the path
    that names the set is resolved: inside it, links are refused (check_tree)."""
    path = Path(root)
    if not path.exists() and not path.is_symlink():
        raise NotARunSet(_no_such_folder(root))
    canonical = Path(os.path.realpath(path))
    if not canonical.is_dir():
        raise NotARunSet(f"{root}: evidence root is not a directory ({canonical})")
    _refuse_reports_apart(root, canonical)
    return canonical


def _no_such_folder(given: str | Path) -> str:
    """A missing root named with the working folder it was looked for in, and where a set of
    that name or path lies: a bare set name, or a relative path run from another folder than
    the checkout's root (README's `sacscale verify results/S` run from docs/)."""
    if Path(given).is_absolute():
        return f"{given}: no such folder"
    here = Path(os.path.abspath("."))
    said = f"{given}: no such folder in the working folder {here}"
    hint = _set_of_that_name(given)
    if hint:
        return f"{said}; did you mean {hint}?"
    top = next((top for top in set_checkouts() if top != here and os.path.isdir(top / given)), None)
    if top is None:
        return said
    if here.is_relative_to(top):  # run from a folder of the checkout: its root is the place
        return (f"{said}; run it from the repository root {top}, which holds it "
                f"(or: sacscale verify {os.path.relpath(top / given)})")
    return f"{said}; the checkout {top} holds it: sacscale verify {top / given}"


def _set_of_that_name(given: str | Path) -> str | None:
    """results/<given> where `given` is a bare name, as the pipeline prints a set's, and that
    folder exists under the working folder, the checkout holding it or this code's; spelled
    as it is reached from here."""
    name = str(given).rstrip("/")  # `p92y/`, as a shell completes a folder, is the same name
    if not name or "/" in name or name in (".", ".."):
        return None
    here = Path(os.path.abspath("."))
    for top in set_checkouts():
        found = _named_set(top / "results", name)
        if found is not None:
            inside = top == here or here.is_relative_to(top)  # short and relative where it is above us
            return os.path.relpath(top / "results" / found) if inside else str(top / "results" / found)
    return None


def _named_set(results: Path, name: str) -> str | None:
    """The folder of results/ named `name`, else the one folder whose name differs from it
    only in case (`P92Y` for p92y); with two such folders neither is guessed."""
    if os.path.isdir(results / name):
        return name
    try:
        alike = [f.name for f in results.iterdir() if f.name.lower() == name.lower() and f.is_dir()]
    except OSError:
        return None
    return alike[0] if len(alike) == 1 else None


def _as_given(given: str | Path, path: Path) -> str:
    """`path` spelled as the user spelled the root: relative where they gave a relative one."""
    return str(path) if Path(given).is_absolute() else os.path.relpath(path)


def refuse_not_a_set(given: str | Path, root: Path, manifest: Path | None = None) -> None:
    """A folder with neither a manifest nor a plan is not a run set: a set's report folder, a
    folder inside a set or its report, and a folder of sets are named as what they are, with
    a set to verify instead (building a manifest there, the cure for a set without one,
    would be the wrong one)."""
    if _is_set(root):
        return
    report = next((folder for folder in (root, *root.parents) if _set_of_report(folder) is not None), None)
    if report is not None:
        what = "a report folder" if report == root else f"a folder inside the report folder {_as_given(given, report)}"
        raise NotARunSet(f"{given} is {what}; verify the set: sacscale verify "
                         f"{_as_given(given, _set_of_report(report))}")
    for above in root.parents:
        if _is_set(above):
            raise NotARunSet(f"{given} is a folder inside the run set {_as_given(given, above)}; verify the set: "
                             f"sacscale verify {_as_given(given, above)}")
    _refuse_a_folder_of_sets(given, root)
    if manifest is not None:
        _refuse_a_manifest_of_nothing_here(given, root, manifest)
    elif not os.path.isdir(root / "runs"):  # nor a set being made: nothing there would be checked
        raise NotARunSet(f"{given} is not a run set (it holds no {MANIFEST_NAME}, plan.json or runs/); "
                         "a set is a folder such as results/<set>")


def _refuse_a_manifest_of_nothing_here(given: str | Path, root: Path, manifest: Path) -> None:
    """A manifest given for a folder that holds none of the files it lists hashes another
    folder: named at once, not checked file by file (a walk of /usr, a thousand lines)."""
    try:
        listed = parse_manifest(manifest, root)
    except ManifestError:
        return  # named as what it is by the manifest check
    if listed and not any(os.path.lexists(root / rel) for rel in listed):
        raise NotARunSet(f"{given} holds none of the {len(listed)} files {manifest} lists: not the set it "
                         "hashes; verify that set, or give this one's manifest")


def _refuse_a_folder_of_sets(given: str | Path, root: Path) -> None:
    """results/, reports/ or the checkout itself, named for one set: one to verify is named."""
    reports = root.name == "reports"
    for folder in [root.parent / "results"] if reports else [root, root / "results"]:
        if sets := _sets_in(folder):
            held = f"the reports of {len(sets)} run sets" if reports else f"{len(sets)} run sets"
            raise NotARunSet(f"{given} is not a run set but holds {held}; verify one at a time, e.g.: "
                             f"sacscale verify {_as_given(given, sets[0])}")


def _sets_in(folder: Path) -> list[Path]:
    """The run sets directly in `folder` (none where it cannot be read, or is a link)."""
    try:
        return sorted(child for child in folder.iterdir() if not child.is_symlink() and _is_set(child)) \
            if folder.is_dir() and not folder.is_symlink() else []
    except OSError:
        return []


def _is_set(folder: Path) -> bool:
    # os.path.isfile: False for a folder this user may not read, where Path.is_file raises
    return os.path.isfile(folder / MANIFEST_NAME) or os.path.isfile(folder / "plan.json")


def _set_of_report(folder: Path) -> Path | None:
    """The run set whose report folder `folder` is (reports/S beside results/S), if any."""
    if folder.parent.name != "reports":
        return None
    beside = folder.parent.parent / "results" / folder.name
    return beside if os.path.isdir(beside) else None


def _refuse_reports_apart(root: str | Path, canonical: Path) -> None:
    """A set named through a link whose reports folder (reports/S beside results/S) is not
    the one beside the link's target: a reader of the checkout the link lies in opens the
    page beside the link, which verify, checking the target's, would never read."""
    beside_given = reports_dir(Path(os.path.abspath(root)))
    if beside_given is None or not os.path.lexists(beside_given):
        return  # not named as results/S, or nothing beside the name: no page there a reader could take for it
    beside_target = reports_dir(canonical)
    if beside_target is None or os.path.realpath(beside_given) != os.path.realpath(beside_target):
        target = f"its target's {beside_target}" if beside_target else "its target, which lies in no results/ folder"
        raise ManifestError(f"{root}: a link to {canonical}, whose report beside the link ({beside_given}) is not "
                            f"{target}, the one verify would check; verify the set where it lies, or make "
                            f"{beside_given} a link to that report")
