"""The probe pipeline: configuration (:mod:`.config`) -> prepared inputs, scores (:mod:`.run`)
-> evaluation (:mod:`.evaluate`, the bootstrap of :mod:`.resample`) -> result; paired
differences between results (:mod:`.compare`).

A->T tables hold ``P(task | attribute)`` (each column sums to 1), T->A tables
``P(attribute | task)`` (each row); rows are tasks, columns attributes.
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
