"""The profiles Snakemake read (the workflow profile `profiles/default`, `--profile`,
`$SNAKEMAKE_PROFILE`) set its options and, through `config:`, config values, taken as the
invoking user's own: another user's profile planned their values with no word, and the
checkout's own profile made writable by a group holding another user was accepted. Each
profile file is now held to the rule of config files, in one line naming it."""

import grp
import os
import pwd

import pytest

from pipeline_helpers import snakemake
from sacscale.pipeline.profile_check import used_profile_files
from sacscale.pipeline.runplan import PlanError, check_profiles

THEIRS = 65534
as_root = pytest.mark.skipif(os.getuid() != 0, reason="giving a file to another user needs root")
TAKEN_AS = "a profile's entries are taken as this user's own options and config values"


def profile(folder, text="config: [run_set=theirs]\n", mode=0o644):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "config.yaml"
    path.write_text(text)
    path.chmod(mode)
    return path


def test_the_profiles_used_are_found_as_snakemake_finds_them(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SNAKEMAKE_PROFILE", raising=False)
    workflow, given = profile(tmp_path / "profiles" / "default"), profile(tmp_path / "given")
    snakefile = tmp_path / "Snakefile"
    assert used_profile_files([], snakefile) == [workflow.relative_to(tmp_path)]
    assert used_profile_files(["--profile", str(given.parent)], snakefile) == [given, workflow.relative_to(tmp_path)]
    assert used_profile_files(["--workflow-profile", "none"], snakefile) == []
    monkeypatch.setenv("SNAKEMAKE_PROFILE", str(given.parent))
    assert used_profile_files(["--workflow-profile", "none"], snakefile) == [given]
    assert used_profile_files(["--profile", "none", "--workflow-profile", "none"], snakefile) == []


@pytest.mark.parametrize("argv", [["--profile", "{dir}"], ["--workflow-profile", "{dir}"]], ids=["profile", "workflow"])
def test_a_profile_others_may_write_is_refused(tmp_path, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SNAKEMAKE_PROFILE", raising=False)
    path = profile(tmp_path / "p", mode=0o666)
    with pytest.raises(PlanError, match=rf"^Snakemake profile {path}: is writable by other users \(mode 0666\); "
                                        f"{TAKEN_AS}"):
        check_profiles([a.format(dir=path.parent) for a in argv], None)


def test_a_profile_in_a_folder_others_may_rename_entries_in_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = profile(tmp_path / "shared" / "p")
    (tmp_path / "shared").chmod(0o777)
    with pytest.raises(PlanError) as caught:
        check_profiles(["--profile", str(path.parent), "--workflow-profile", "none"], None)
    assert str(caught.value).startswith(
        f"Snakemake profile {path}: lies in {path.parent}, inside {tmp_path / 'shared'}, which is writable by other "
        "users without the sticky bit (mode 0777): another user could swap a file of theirs in"), caught.value


def test_a_profile_file_through_a_link_of_ours_in_such_a_folder_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    real = profile(tmp_path / "p")
    real.rename(tmp_path / "p" / "real.yaml")
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "pc.yaml").symlink_to(tmp_path / "p" / "real.yaml")
    (tmp_path / "p" / "config.yaml").symlink_to(tmp_path / "shared" / "pc.yaml")
    (tmp_path / "shared").chmod(0o777)  # others may rename their own link over ours there
    with pytest.raises(PlanError) as caught:
        check_profiles(["--profile", str(real.parent), "--workflow-profile", "none"], None)
    assert str(caught.value).startswith(
        f"Snakemake profile {real}: lies in {tmp_path / 'shared'}, which is writable by other users without the "
        "sticky bit (mode 0777): another user could swap a file of theirs in"), caught.value


def test_a_profile_of_ours_in_a_sticky_folder_passes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sticky").mkdir()
    (tmp_path / "sticky").chmod(0o1777)  # as /tmp: others may not rename what is ours
    path = profile(tmp_path / "sticky" / "p")
    check_profiles(["--profile", str(path.parent), "--workflow-profile", "none"], None)


def test_a_profile_writable_by_ones_own_private_group_passes(tmp_path, monkeypatch):
    gid = os.getgid()
    if grp.getgrgid(gid).gr_mem or any(u.pw_gid == gid and u.pw_uid != os.getuid() for u in pwd.getpwall()):
        pytest.skip("this user's primary group holds other users")
    monkeypatch.chdir(tmp_path)
    path = profile(tmp_path / "profiles" / "default", mode=0o664)  # umask 002
    path.parent.chmod(0o775)
    check_profiles([], tmp_path / "Snakefile")


def _shared_group():
    """(name, gid): the primary group of another user."""
    for user in pwd.getpwall():
        if user.pw_uid != os.getuid() and user.pw_gid != os.getgid():
            try:
                return grp.getgrgid(user.pw_gid).gr_name, user.pw_gid
            except KeyError:
                continue
    pytest.skip("no group of another user here")


def planned(out: str) -> bool:
    return "sacscale: preset" in out


@as_root
@pytest.mark.parametrize("through", ["option", "environment"])
def test_another_users_profile_is_refused_before_the_plan(workflow_dir, tmp_path, through):
    theirs = profile(tmp_path / "theirs")
    os.chown(theirs, THEIRS, THEIRS)
    os.chown(theirs.parent, THEIRS, THEIRS)
    argv = ["--profile", str(theirs.parent)] if through == "option" else []
    env = {**os.environ, "SNAKEMAKE_PROFILE": str(theirs.parent)} if through == "environment" else None
    proc = snakemake(workflow_dir, "-n", "--cores", "1", *argv, env=env)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert f"config error: Snakemake profile {theirs}: belongs to uid {THEIRS}, another user; {TAKEN_AS}" in out
    assert not planned(out) and "Traceback" not in out


@as_root
def test_the_workflow_profile_writable_by_a_group_of_others_is_refused(workflow_dir):
    name, gid = _shared_group()
    path = workflow_dir / "profiles" / "default" / "config.yaml"
    os.chown(path, 0, gid)
    path.chmod(0o664)
    proc = snakemake(workflow_dir, "-n", "--cores", "1")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert (f"config error: Snakemake profile profiles/default/config.yaml: is writable by its group {name} "
            f"(gid {gid}; other users in it: ") in out
    assert not planned(out)
    proc = snakemake(workflow_dir, "-n", "--cores", "1", "--workflow-profile", "none")
    assert proc.returncode == 0 and planned(proc.stdout + proc.stderr), proc.stderr


@as_root
def test_a_profile_named_through_another_users_folder_by_dot_dot_is_refused(workflow_dir, tmp_path):
    """`--profile theirs/../mine/p`: the kernel enters their folder before `..` leaves it (they
    may put a link of theirs at its name while Snakemake reads); judged normalised, it passed."""
    (tmp_path / "theirs").mkdir()
    os.chown(tmp_path / "theirs", THEIRS, THEIRS)
    profile(tmp_path / "mine" / "p")
    named = f"{tmp_path}/theirs/../mine/p"
    proc = snakemake(workflow_dir, "-n", "--cores", "1", "--profile", named)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert (f"config error: Snakemake profile {named}/config.yaml: lies in {named}, reached through "
            f"{tmp_path}/theirs, which belongs to uid {THEIRS}, another user: another user could swap") in out, out
    assert not planned(out) and "Traceback" not in out
