"""Policy evaluation: how well a trained actor follows a fixed grid of velocity commands
(evaluate), which run is best (best), and videos of a policy (render, with gl_backend,
render_model and video)."""
