"""What the evaluation tests share: the compiled G1 model, built once a test process."""

import pytest

from sacscale.task import g1_model as g1


@pytest.fixture(scope="session")
def model_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "g1_walk_flat.mjb"
    g1.save_model(g1.build_g1_model(), path)
    return path
