"""biasamp: directional bias amplification in masked language models.

Importing :mod:`biasamp` is light: it never imports torch or transformers (only
:mod:`biasamp.scoring` does, lazily). Public names are loaded on first access.
"""

from __future__ import annotations

import importlib

from ._errors import BiasampError, MissingDependencyError, UnknownNameError

__version__ = "0.1.0"

# name -> module that defines it (loaded lazily on first attribute access)
_LAZY = {
    "probe": "biasamp.probe",
    "ProbeConfig": "biasamp.probe",
    "ProbeResult": "biasamp.probe",
}

__all__ = sorted(["BiasampError", "MissingDependencyError", "ProbeConfig", "ProbeResult",
                  "UnknownNameError", "__version__", "probe"])


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'biasamp' has no attribute {name!r}")
