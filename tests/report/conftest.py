import sys
from pathlib import Path

# tests/synthetic_runs.py: synthetic event files shared by the pipeline's tests
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
