import pytest

from sacscale.task.g1_model import build_g1_model


@pytest.fixture(scope="session")
def g1_model():
    return build_g1_model()
