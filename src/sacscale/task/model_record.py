"""The fields of model.json, as `sacscale prepare-model` writes them
(sacscale.commands._prepared_model.summary_record): the report shows these only, and verify
names any other key, which nothing would check. Without MuJoCo, so that both read it."""

MODEL_RECORD_FIELDS = ("file", "sha256", "bytes", "source", "summary", "physics_cost", "mujoco_version")
