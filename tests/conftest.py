"""Shared pytest fixtures."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def one_torch_thread():
    """Run a module's tiny models on one torch thread, then restore the previous count.

    Tiny models gain nothing from threads; on a busy 2-core box two threads are 20x slower.
    """
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
