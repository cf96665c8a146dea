"""The bias-amplification metric family (pure numpy/pandas; importing it never imports torch).

Conventions
-----------
- Orientation: **rows are tasks** (occupations), **columns are attributes** (he/she/they).
  Tables have shape (n_tasks, n_attributes); DataFrames carry tasks in the index and
  attributes in the columns and are aligned by label (a mismatch is an error).
- Directions: ``"attribute_to_task"`` and ``"task_to_attribute"``; ``"A->T"`` / ``"T->A"``
  are accepted aliases. Results always store the canonical name.
- Association (indicator) ``y = sign(P(T=t|A=a) - P(T=t))``, equivalently
  ``sign(P(A,T) - P(A)P(T))``; ``|.| <= tie_tol`` (default 1e-12) is a tie (0), which
  contributes 0 but counts in the mean. ``tie_tol=0.0`` is the published ``np.sign``.
- Undefined cells (empty conditioning set, zero row/column) are NaN, skipped in the mean,
  counted in ``n_nan``, and announced by one warning; a headline is NaN only when nothing
  is defined.
- Per-pair results are tidy DataFrames (``task, attribute, association, p_base, p_model,
  delta, contribution``), task-major; numpy inputs are labelled by integer position.
- Attacker-based metrics (leakage, DPA) take any object with ``fit(X, y)`` / ``predict(X)``;
  defaults are numpy-only (:class:`MLPAttacker`), and :class:`BayesOptimalAttacker` is exact
  for categorical inputs. Trials are seeded; results hold numbers, never formatted strings.
- Errors on bad input are :class:`biasamp.BiasampError` naming the parameter and echoing
  the value.
"""

from ._attackers import BayesOptimalAttacker, MLPAttacker
from ._ci import bootstrap_ci, resample_indices
from ._directional import DirectionalResult, directional_bias_amplification
from ._directional import table_core as directional_table_core
from ._directional_labels import directional_bias_amplification_labels
from ._dpa import directional_predictability_amplification
from ._leakage import TrialsResult, leakage_amplification
from ._mals import mals_bias_amplification, mals_bias_amplification_labels
from ._multi import multi_attribute_bias_amplification

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
