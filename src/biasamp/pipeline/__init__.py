"""The probe pipeline: configuration -> prepared inputs -> scores -> evaluation -> result.

- :mod:`.config`: :class:`ProbeConfig` (validated once, when built) and the compat modes.
- :mod:`.evaluate`: :func:`evaluate_tables`, the pure model-free stage (tables -> BiasAmp->:
  point estimates, intervals, the checked base tables), and the :class:`~.evaluate.Design`.
- :mod:`.resample`: the one bootstrap behind every interval (templates, tasks, base counts).
- :mod:`.run`: :func:`prepare` (templates, tasks, prompts and base-rate tables, before any
  model is loaded), :func:`probe` / :func:`probe_many` (the only part that loads a model, through
  :mod:`biasamp.scoring`), :func:`evaluate_scores` (scored prompts -> tables -> BiasAmp->, for
  the probe and the lm-evaluation-harness tasks alike) and :func:`write_result`.
- :mod:`.compare`: :func:`paired_differences` between results.

Orientation everywhere: rows are tasks (occupations), columns are attributes. A->T tables hold
``P(task | attribute)`` (each column sums to 1), T->A tables ``P(attribute | task)`` (rows).
"""

from .compare import paired_differences
from .config import COMPAT_MODES, CompatMode, ProbeConfig
from .evaluate import Evaluation, evaluate_tables
from .run import evaluate_scores, prepare, probe, probe_many, row_scores

__all__ = [
    "COMPAT_MODES",
    "CompatMode",
    "Evaluation",
    "ProbeConfig",
    "evaluate_scores",
    "evaluate_tables",
    "paired_differences",
    "prepare",
    "row_scores",
    "probe",
    "probe_many",
]
