"""The bias-amplification metric family (pure numpy/pandas; importing it never imports torch).

Orientation, directions, ties, undefined cells and result tables: docs/metrics.md.
"""

from ._attackers import BayesOptimalAttacker, MLPAttacker
from ._ci import bootstrap_ci, resample_indices
from ._directional import (
    DirectionalResult,
    directional_bias_amplification,
    directional_bias_amplification_labels,
)
from ._directional import table_core as directional_table_core
from ._leakage import TrialsResult, directional_predictability_amplification, leakage_amplification
from ._mals import (
    mals_bias_amplification,
    mals_bias_amplification_labels,
    multi_attribute_bias_amplification,
)

__all__ = [
    "BayesOptimalAttacker",
    "DirectionalResult",
    "MLPAttacker",
    "TrialsResult",
    "bootstrap_ci",
    "directional_bias_amplification",
    "directional_bias_amplification_labels",
    "directional_predictability_amplification",
    "directional_table_core",
    "leakage_amplification",
    "mals_bias_amplification",
    "mals_bias_amplification_labels",
    "multi_attribute_bias_amplification",
    "resample_indices",
]
