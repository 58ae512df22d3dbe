"""The G1WalkFlat task: model building (g1_model) and the vectorised environment (g1_walk_flat)."""

from sacscale.task.g1_model import build_g1_model, load_model, model_summary, save_model
from sacscale.task.g1_walk_flat import G1WalkFlat, StepOutput, TaskConfig

__all__ = ["G1WalkFlat", "StepOutput", "TaskConfig", "build_g1_model", "load_model", "model_summary", "save_model"]
