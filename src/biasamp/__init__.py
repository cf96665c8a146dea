"""biasamp: directional bias amplification in language models.

Importing :mod:`biasamp` is light: it never imports torch or transformers (only
:mod:`biasamp.scoring` does, when a scorer is built). The public names below are loaded on
first access and listed by ``dir(biasamp)``:

- :func:`probe`, :func:`probe_many`: run the whole job for one / several models;
- :class:`ProbeConfig`: the options (TOML/YAML loadable);
- :class:`ProbeResult`: a result (``save(dir)``, ``ProbeResult.load(dir)``);
- :func:`evaluate_tables`: the model-free stage, for your own scorer;
- the exceptions and warnings of :mod:`biasamp._errors`.
"""

from __future__ import annotations

import importlib

from ._errors import (BiasampError, BiasampWarning, ChatModelWarning, MissingDependencyError,
                      UnavailableCIWarning, UndefinedCellsWarning, UndefinedTrialsWarning,
                      StaleLockWarning, UnknownNameError, ZeroRowWarning)

__version__ = "0.1.0"

# public name -> module that defines it (imported on first access: pandas is not light)
_LAZY = {
    "ProbeConfig": "biasamp.pipeline.config",
    "ProbeResult": "biasamp.results",
    "evaluate_tables": "biasamp.pipeline.evaluate",
    "probe": "biasamp.pipeline.run",
    "probe_many": "biasamp.pipeline.run",
}

__all__ = [
    "BiasampError",
    "BiasampWarning",
    "ChatModelWarning",
    "MissingDependencyError",
    "ProbeConfig",
    "ProbeResult",
    "StaleLockWarning",
    "UnavailableCIWarning",
    "UndefinedCellsWarning",
    "UndefinedTrialsWarning",
    "UnknownNameError",
    "ZeroRowWarning",
    "__version__",
    "evaluate_tables",
    "probe",
    "probe_many",
]


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'biasamp' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
