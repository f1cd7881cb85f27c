import pyopencl as cl
import pytest


@pytest.fixture(scope="session")
def queue():
    return cl.CommandQueue(cl.create_some_context(interactive=False))
