"""`train --resume D` where a part of D has a default access control list giving another
user write (set after the run, as root's 0755 checkpoints/ shows `drwxr-xr-x+`). Before:
the resume went on and wrote checkpoints that inherited her write. Now the part is refused
as one others can write in."""

from access_lists import default_for, set_list, unknown_uid
from cli_runs import one_line, sacscale
from resume_parts import WAY_OUT, make_run_dir


def test_a_checkpoints_folder_whose_default_list_hands_new_files_to_another_user_is_refused(tmp_path):
    run = make_run_dir(tmp_path)
    uid = unknown_uid()
    set_list(run / "checkpoints", "default", *default_for(uid))
    one_line(sacscale("train", "--resume", run, "--iterations", "9"),
             f"--resume {run}: {run}/checkpoints has a default access control list (getfacl shows it, setfacl -k "
             f"removes it) that lets uid {uid} (not known here) write every entry made in it{WAY_OUT}")
