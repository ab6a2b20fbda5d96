"""torch's CPU thread count for a block of work."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch


@contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """Run the block with `threads` CPU threads (torch.set_num_threads, process-wide), then restore
    the count; None keeps it."""
    before = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)
