"""How the crafted-checkpoint tests read a refusal of evaluate or render."""


def one_checkpoint_refusal(capsys, code, command, path, message):
    """The command refused `path` in one line, exit 2, naming `message`, with nothing of
    torch's (no warning, no unexpected error) before it."""
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert err.startswith(f"sacscale {command}: error: {path}: not a checkpoint the trainer wrote ("), err
    assert message in err, err
    assert "\n" not in err and "unexpected" not in err and "Warning" not in err, err
