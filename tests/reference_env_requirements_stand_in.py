"""What the reference-env requirements tests share: the command run with `create` stood in for
(no venv, no pip; the `pip_calls` fixture in conftest.py keeps what it was given), and the
end of the line that refuses another user's local project."""

from sacscale.cli import main

THING_TAIL = ("pip would install it as this user, running its build code, so that user's code could run as this "
              "user: name one of your own")


def created(tmp_path, requirements) -> int:
    python = tmp_path / "venv" / "bin" / "python"
    return main(["reference-env", "--create", "--python", str(python), "--requirements", str(requirements),
                 "--output", str(tmp_path / "r.json")])
