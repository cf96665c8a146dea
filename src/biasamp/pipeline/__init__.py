"""The probe pipeline: configuration -> prepared inputs -> scores -> evaluation -> result.

- :mod:`.config`: :class:`ProbeConfig` (validated once, when built) and the compat modes.
- :mod:`.prepare`: templates, tasks, prompts and base-rate tables, before any model is loaded.
- :mod:`.evaluate`: :func:`evaluate_tables`, the pure model-free stage (tables -> BiasAmp->).
- :mod:`.scored`: :func:`evaluate_scores`, scored prompts -> tables -> BiasAmp-> (probe and
  lm-evaluation-harness tasks alike).
- :mod:`.run`: :func:`probe` / :func:`probe_many` (the only part that loads a model, through
  :mod:`biasamp.scoring`) and :func:`write_result` (data files, then the reports asked for).

Orientation everywhere: rows are tasks (occupations), columns are attributes. A->T tables hold
``P(task | attribute)`` (each column sums to 1), T->A tables ``P(attribute | task)`` (rows).
"""

from ._folders import model_folders, model_slug
from .compare import paired_differences
from .config import COMPAT_MODES, CompatMode, ProbeConfig
from .evaluate import Evaluation, evaluate_tables
from .prepare import Prepared, prepare
from .scored import Scored, evaluate_scores, row_scores
from .run import probe, probe_many, write_result

__all__ = [
    "COMPAT_MODES",
    "CompatMode",
    "Evaluation",
    "Prepared",
    "ProbeConfig",
    "Scored",
    "evaluate_scores",
    "evaluate_tables",
    "model_folders",
    "model_slug",
    "paired_differences",
    "prepare",
    "row_scores",
    "probe",
    "probe_many",
    "write_result",
]
