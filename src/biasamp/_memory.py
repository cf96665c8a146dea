"""The memory a run may use, and the refusal of a setting whose estimated need exceeds it."""

from __future__ import annotations

import os

from ._errors import BiasampError

_CGROUP_FILES = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")


def memory_limit() -> int | None:
    """Bytes this process may use: physical memory or a smaller cgroup limit (None: unknown)."""
    try:
        limit = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        limit = None
    for path in _CGROUP_FILES:
        try:
            with open(path, encoding="ascii") as f:
                text = f.read().strip()
        except (OSError, UnicodeDecodeError):
            continue
        if text.isdigit():
            limit = int(text) if limit is None else min(limit, int(text))
    return limit


def check_memory(need: int, name: str, value: int, what: str) -> None:
    """Refuse ``value`` of the option ``name`` when it needs ``need`` bytes ``what`` (an upper
    estimate), more than :func:`memory_limit`.

    >>> check_memory(2**70, "n_resamples", 10**9, "for the bootstrap")
    Traceback (most recent call last):
    ...
    biasamp._errors.BiasampError: n_resamples 1000000000 needs about 1,099,511,627,776.0 GiB ...
    """
    limit = memory_limit()
    if limit is not None and need > limit:
        raise BiasampError(
            f"{name} {value} needs about {need / 2**30:,.1f} GiB {what}, more "
            f"than this machine's {limit / 2**30:,.1f} GiB of memory; use at "
            f"most about {value * limit // need:,}"
        )
