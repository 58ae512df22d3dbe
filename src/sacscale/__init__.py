"""sacscale: data-parallel FastSAC on a CPU-MuJoCo Unitree G1 (G1WalkFlat)."""

__version__ = "0.1.0"
