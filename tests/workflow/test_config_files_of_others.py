"""Each config file Snakemake loaded (config.yaml and every --configfile) is judged before
the plan: one another user owns, or may change, was taken without a word (with
`__use_yte__: true` its expressions run as the invoking user, before the workflow could look:
docs/config.md, "Known limits"); it is now refused in one line naming it. And a config file's
name is shown with its escape sequences escaped, as its values are: a name holding ESC ]0;
(the terminal's title) or ESC [2J (clear the screen) reached the terminal raw."""

import os

import pytest

from cli_runs import other_users_link
from pipeline_helpers import snakemake
from sacscale.pipeline.config_check import ConfigError, refuse_others_file
from sacscale.pipeline.runplan import PlanError, check_config

THEIRS = 65534
as_root = pytest.mark.skipif(os.getuid() != 0, reason="giving a file to another user needs root")


def config_file(folder, name="extra.yaml", text="iterations: 24\n", mode=0o644):
    path = folder / name
    path.write_text(text)
    path.chmod(mode)
    return path


@as_root
def test_a_configfile_of_another_user_is_refused_before_the_plan(workflow_dir, tmp_path):
    theirs = config_file(tmp_path)
    os.chown(theirs, THEIRS, THEIRS)
    proc = snakemake(workflow_dir, "-n", "--cores", "1", "--configfile", str(theirs))
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert (f"config error: config file {theirs}: belongs to uid {THEIRS}, another user; a config file is "
            "taken as this user's own instructions") in out
    assert "use a copy of your own, closed to others (chmod go-w)" in out
    assert "sacscale: preset" not in out and "Traceback" not in out
    assert not (workflow_dir / "results").exists()


@pytest.mark.parametrize("mode", [0o666, 0o646], ids=oct)
def test_a_config_file_others_may_write_is_refused(tmp_path, mode):
    path = config_file(tmp_path, mode=mode)
    with pytest.raises(PlanError, match=rf"^config file {path}: is writable by other users \(mode 0{mode:o}\);"):
        check_config([path], {})


def test_a_config_file_of_ours_closed_to_others_passes(tmp_path):
    check_config([config_file(tmp_path)], {"iterations": 24})


NAME = "\x1b]0;PWN\x07\x1b[2Jc.yaml"
SHOWN = "\\x1b]0;PWN\\x07\\x1b[2Jc.yaml"


@pytest.mark.parametrize("text, problem", [
    ('schedule: "\\e"\n', "schedule: holds a control character ('\\x1b')"),
    ("a: 1\na: 2\n", "line 2: duplicate key 'a'"),
    ("schedule: \xff\n", "not UTF-8 text (byte 10)"),
])
def test_a_config_file_name_is_shown_escaped(tmp_path, text, problem):
    path = tmp_path / NAME
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(PlanError) as caught:
        check_config([path], {})
    message = str(caught.value)
    assert message.startswith(f"config file {tmp_path}/{SHOWN}: {problem}"), message
    assert "\x1b" not in message and "\x07" not in message


def test_a_config_file_of_others_is_named_escaped(tmp_path):
    path = config_file(tmp_path, name=NAME, mode=0o666)
    with pytest.raises(PlanError, match="is writable by other users") as caught:
        check_config([path], {})
    assert "\x1b" not in str(caught.value) and SHOWN in str(caught.value)


def test_a_long_list_under_a_key_with_escapes_is_named_escaped():
    with pytest.raises(PlanError) as caught:
        check_config([], {"\x1b[2Jkey": list(range(5000))})
    assert str(caught.value).startswith("\\x1b[2Jkey: a list of 5000 items"), caught.value


def test_the_workflow_end_to_end_shows_the_name_escaped(workflow_dir, tmp_path):
    path = tmp_path / NAME
    path.write_text('schedule: "\\e"\n')
    proc = snakemake(workflow_dir, "-n", "--cores", "1", "--configfile", str(path))
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert f"config error: config file {tmp_path}/{SHOWN}: schedule: holds a control character" in out
    assert "\x1b" not in out and "\x07" not in out


# A file of ours in a folder another user may rename entries in: she swapped hers in while
# Snakemake read it and ours back for the check (3 tries in 10 took her values).
SWAP = "another user could swap a file of theirs in at its name while Snakemake read it"


def test_a_config_file_in_a_folder_others_may_write_in_is_refused(tmp_path):
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o777)
    path = config_file(folder)
    with pytest.raises(PlanError) as caught:
        check_config([path], {})
    assert str(caught.value) == (
        f"config file {path}: lies in {folder}, which is writable by other users without the sticky bit "
        f"(mode 0777): {SWAP}; a config file is taken as this user's own instructions (and run as code with "
        "__use_yte__): use a copy of your own, in a folder only you (or root) can change")


def test_a_config_file_below_such_a_folder_names_both(tmp_path):
    (tmp_path / "shared" / "mine").mkdir(parents=True)
    (tmp_path / "shared").chmod(0o777)
    path = config_file(tmp_path / "shared" / "mine")
    with pytest.raises(PlanError, match=rf"^config file {path}: lies in {path.parent}, inside {tmp_path}/shared, "
                                        r"which is writable by other users without the sticky bit"):
        check_config([path], {})


def test_a_link_of_ours_to_a_config_file_in_such_a_folder_is_refused(tmp_path):
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared").chmod(0o777)
    target = config_file(tmp_path / "shared")
    link = tmp_path / "link.yaml"
    link.symlink_to(target)
    with pytest.raises(PlanError, match=rf"^config file {link}: lies in {tmp_path}/shared, which is writable"):
        check_config([link], {})


def test_a_config_file_of_ours_in_a_sticky_folder_passes(tmp_path):
    folder = tmp_path / "sticky"
    folder.mkdir()
    folder.chmod(0o1777)  # as /tmp: only a file's owner (or root) may rename it
    check_config([config_file(folder)], {"iterations": 24})


@as_root
def test_a_configfile_of_ours_in_a_folder_of_another_user_is_refused_before_the_plan(workflow_dir, tmp_path):
    folder = tmp_path / "theirs"
    folder.mkdir()
    ours = config_file(folder, text="run_set: ours\n")
    os.chown(folder, THEIRS, THEIRS)
    _refused_as_in_their_folder(workflow_dir, ours, folder)


def chain(tmp_path, hop_folder):
    """link.yaml -> HOP_FOLDER/hop.yaml -> mine/real.yaml: two links of ours, the file ours in
    a folder of ours; only the hop's folder may be another user's."""
    (tmp_path / "mine").mkdir()
    real = config_file(tmp_path / "mine", name="real.yaml")
    hop = hop_folder / "hop.yaml"
    hop.symlink_to(real)
    link = tmp_path / "link.yaml"
    link.symlink_to(hop)
    return link


def test_a_link_through_a_link_of_ours_in_such_a_folder_is_refused(tmp_path):
    (tmp_path / "shared").mkdir()
    link = chain(tmp_path, tmp_path / "shared")
    (tmp_path / "shared").chmod(0o777)  # its owner's link there can be renamed over by others
    with pytest.raises(PlanError, match=rf"^config file {link}: lies in {tmp_path}/shared, which is writable "
                                        rf"by other users without the sticky bit \(mode 0777\): {SWAP}"):
        check_config([link], {})


def test_a_link_through_links_in_folders_of_ours_passes(tmp_path):
    (tmp_path / "hops").mkdir()
    check_config([chain(tmp_path, tmp_path / "hops")], {"iterations": 24})


@as_root
def test_a_configfile_through_a_link_of_ours_in_a_folder_of_another_user_is_refused_before_the_plan(
        workflow_dir, tmp_path):
    folder = tmp_path / "theirs"
    folder.mkdir()
    link = chain(tmp_path, folder)
    (tmp_path / "mine" / "real.yaml").write_text("run_set: ours\n")
    os.chown(folder, THEIRS, THEIRS)
    _refused_as_in_their_folder(workflow_dir, link, folder)


def _refused_as_in_their_folder(workflow_dir, configfile, folder):
    """A dry run with `configfile` ends before the plan, naming it and another user's `folder`."""
    proc = snakemake(workflow_dir, "-n", "--cores", "1", "--configfile", str(configfile))
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert (f"config error: config file {configfile}: lies in {folder}, which belongs to uid {THEIRS}, another "
            f"user: {SWAP}") in out
    assert "sacscale: preset" not in out and "Traceback" not in out


def _through_their_folder(tmp_path):
    """`theirs/../mine/extra.yaml`: a config file of ours, named through another user's folder."""
    theirs, mine = tmp_path / "theirs", tmp_path / "mine"
    theirs.mkdir()
    mine.mkdir()
    config_file(mine, text="run_set: ours\n")
    os.chown(theirs, THEIRS, THEIRS)
    return theirs, f"{theirs}/../mine/extra.yaml"


@as_root
def test_a_config_file_named_through_another_users_folder_by_dot_dot_is_refused(tmp_path):
    """The kernel enters `theirs` before `..` leaves it: its owner may put a link of theirs at
    its name while Snakemake reads (and her folder back for the check). Judged at the name
    normalised (`mine/extra.yaml`), it passed."""
    theirs, path = _through_their_folder(tmp_path)
    with pytest.raises(PlanError) as caught:
        check_config([path], {})
    assert str(caught.value).startswith(
        f"config file {path}: lies in {theirs}/../mine, reached through {theirs}, which belongs to uid {THEIRS}, "
        f"another user: {SWAP}; ")


@as_root
def test_a_configfile_named_through_another_users_folder_is_refused_before_the_plan(workflow_dir, tmp_path):
    theirs, path = _through_their_folder(tmp_path)
    proc = snakemake(workflow_dir, "-n", "--cores", "1", "--configfile", path)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert f"config error: config file {path}: lies in {theirs}/../mine, reached through {theirs}, which " in out
    assert "sacscale: preset" not in out and "Traceback" not in out


@as_root
def test_another_users_link_on_the_way_is_refused_by_the_owner_check_itself(tmp_path):
    """Her link swapped in after the file was read (and before the owner check) is seen there."""
    (tmp_path / "mine").mkdir()
    config_file(tmp_path / "mine")
    link = other_users_link(tmp_path / "sticky" / "eve", tmp_path / "mine")
    path = f"{link}/../mine/extra.yaml"
    with pytest.raises(ConfigError, match=rf"^config file {path}: {link}: another user's symbolic link \(uid 1001\)"):
        refuse_others_file(path)


def test_a_config_file_gone_after_it_was_read_is_refused(tmp_path):
    """Something on the way changed between the read and the owner check: nothing is judged
    at a name that no longer leads to the file read, so it is refused, not passed."""
    path = tmp_path / "gone.yaml"
    with pytest.raises(ConfigError, match=rf"^config file {path}: cannot be looked at after it was read \(No such "):
        refuse_others_file(path)
