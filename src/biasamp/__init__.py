"""biasamp: directional bias amplification in language models. Importing it never imports
torch; the public names are loaded on first access:

- :func:`probe`, :func:`probe_many`: run the whole job for one / several models;
- :class:`ProbeConfig`: the options (TOML/YAML loadable);
- :class:`ProbeResult`: a result (``save(dir)``, ``ProbeResult.load(dir)``);
- :func:`evaluate_tables`: the model-free stage, for your own scorer;
- the exceptions and warnings of :mod:`biasamp._errors`.
"""

from __future__ import annotations

from ._errors import (
    BiasampError,
    BiasampWarning,
    ChatModelWarning,
    MissingDependencyError,
    UnavailableCIWarning,
    UndefinedCellsWarning,
    UndefinedTrialsWarning,
    UnknownNameError,
    ZeroRowWarning,
)
from ._registry import Registry

__version__ = "0.1.0"

# public names imported on first access (pandas is not light)
_PUBLIC = Registry("public name")
for _name, _module in (
    ("ProbeConfig", "pipeline.config"),
    ("ProbeResult", "results"),
    ("evaluate_tables", "pipeline.evaluate"),
    ("probe", "pipeline.run"),
    ("probe_many", "pipeline.run"),
):
    _PUBLIC.register_lazy(_name, f"biasamp.{_module}:{_name}")
__getattr__ = _PUBLIC.module_getattr("biasamp")

__all__ = [
    "BiasampError",
    "BiasampWarning",
    "ChatModelWarning",
    "MissingDependencyError",
    "ProbeConfig",
    "ProbeResult",
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


def __dir__():
    return sorted(set(globals()) | set(__all__))
