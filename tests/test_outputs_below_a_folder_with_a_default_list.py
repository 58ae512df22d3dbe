"""An output whose folder lies below a folder with a default access control list naming
another user. Before: the list was judged on every folder above the output, and `verify
--output anc/sub/v.json` was refused, though she could write neither in anc (its access
list gives her nothing) nor in sub (made before the list: it has none); a default list
only shapes the entries made directly in its folder. Now it is judged where the command
makes entries: the output's folder, or the nearest existing one when folders are made.
An access list above the output that gives her write still counts (she could rename)."""

from access_lists import GROUP_OBJ, MASK, OTHER, USER, USER_OBJ, default_for, entry, set_list, unknown_uid
from cli_runs import REPO, SET, sacscale
from sacscale.atomic import others_can_swap

RESULTS = REPO / "results" / SET


def _above_with_default(tmp_path, uid):
    above = tmp_path / "anc"
    (above / "sub").mkdir(parents=True, mode=0o755)  # made before the list: it has none of its own
    above.chmod(0o755)
    set_list(above, "default", *default_for(uid))
    return above


def test_verify_output_below_a_folder_whose_default_list_names_another_user_is_written(tmp_path):
    above = _above_with_default(tmp_path, unknown_uid())
    output = above / "sub" / "v.json"
    done = sacscale("verify", RESULTS, "--output", output)
    assert done.returncode == 0, done.stderr
    assert output.is_file()


def test_such_a_folder_above_is_no_problem_but_a_folder_made_in_it_is(tmp_path):
    uid = unknown_uid()
    above = _above_with_default(tmp_path, uid)
    assert others_can_swap(above / "sub") is None
    assert others_can_swap(above) == (f"has a default access control list (getfacl shows it, setfacl -k removes it) "
                                      f"that lets uid {uid} (not known here) write every entry made in it")


def test_an_access_list_above_the_output_giving_another_user_write_is_still_refused(tmp_path):
    uid = unknown_uid()
    above = tmp_path / "anc"
    (above / "sub").mkdir(parents=True, mode=0o755)
    set_list(above, "access", entry(USER_OBJ, 7), entry(USER, 7, uid), entry(GROUP_OBJ, 5), entry(MASK, 7),
             entry(OTHER, 5))
    assert others_can_swap(above / "sub") == (f"is inside {above}, which has an access control list (getfacl shows "
                                              f"it, setfacl -b removes it) that lets uid {uid} (not known here) "
                                              "write in it")
