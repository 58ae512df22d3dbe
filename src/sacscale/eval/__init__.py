"""Policy evaluation: how well a trained actor follows a fixed grid of velocity commands."""
