"""What the reference-env requirements tests share: the command run with `create` stood in for
(no venv, no pip; the `pip_calls` fixture in conftest.py keeps what it was given), and the
end of the line that refuses another user's local project, and such projects."""

import os

from sacscale.cli import main

THING_TAIL = ("pip would install it as this user, running its build code, so that user's code could run as this "
              "user: name one of your own")


def created(tmp_path, requirements) -> int:
    python = tmp_path / "venv" / "bin" / "python"
    return main(["reference-env", "--create", "--python", str(python), "--requirements", str(requirements),
                 "--output", str(tmp_path / "r.json")])


def project(folder, uid=None):
    """A local project whose setup.py would run at install; another user's where `uid` is given."""
    folder.mkdir(parents=True)
    (folder / "setup.py").write_text("open('/tmp/should-not-run', 'w').close()\n")
    if uid is not None:
        for path in (folder, folder / "setup.py"):
            os.chown(path, uid, uid)
    return folder


def evil_project(tmp_path):
    """Another user's (uid 1001) project in `tmp_path`."""
    return project(tmp_path / "eve" / "pkg", uid=1001)
