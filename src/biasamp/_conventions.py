"""Conventions shared by every part of biasamp, defined once: the two directions (spelled
``attribute_to_task`` and ``task_to_attribute`` everywhere; :func:`canonical_direction` takes
their aliases), the blank, the attributes and the defaults every function, option and flag
takes from here. Orientation: rows are tasks (occupations), columns are attributes.

>>> canonical_direction("a->t"), canonical_direction(" T->A ")
('attribute_to_task', 'task_to_attribute')
>>> DIRECTION_LABELS["task_to_attribute"]
'T→A'
"""

from __future__ import annotations

from types import MappingProxyType

from ._errors import BiasampError

__all__ = [
    "ATTRIBUTES",
    "ATTRIBUTE_TO_TASK",
    "BLANK",
    "CONFIDENCE",
    "DIRECTIONS",
    "DIRECTION_ALIASES",
    "DIRECTION_LABELS",
    "MODEL_TYPES",
    "N_RESAMPLES",
    "TASK_TO_ATTRIBUTE",
    "TIE_TOL",
    "canonical_direction",
]

ATTRIBUTE_TO_TASK = "attribute_to_task"
TASK_TO_ATTRIBUTE = "task_to_attribute"
#: The two directions, in report order.
DIRECTIONS = (ATTRIBUTE_TO_TASK, TASK_TO_ATTRIBUTE)

#: Accepted spellings (compared after ``strip().lower()``) -> canonical direction.
DIRECTION_ALIASES = MappingProxyType(
    {
        ATTRIBUTE_TO_TASK: ATTRIBUTE_TO_TASK,
        "a->t": ATTRIBUTE_TO_TASK,
        "at": ATTRIBUTE_TO_TASK,
        "a2t": ATTRIBUTE_TO_TASK,
        TASK_TO_ATTRIBUTE: TASK_TO_ATTRIBUTE,
        "t->a": TASK_TO_ATTRIBUTE,
        "ta": TASK_TO_ATTRIBUTE,
        "t2a": TASK_TO_ATTRIBUTE,
    }
)

#: How reports print a direction.
DIRECTION_LABELS = MappingProxyType({ATTRIBUTE_TO_TASK: "A→T", TASK_TO_ATTRIBUTE: "T→A"})

#: The marker of the masked span in a prompt.
BLANK = "[BLANK]"

#: Attribute identities known to the templates, in canonical order.
ATTRIBUTES = ("he", "she", "they")

# -- defaults shared by the probe, the pairs and the metric functions, written here once
#: The level of every bootstrap confidence interval.
CONFIDENCE = 0.95
#: Bootstrap resamples.
N_RESAMPLES = 10_000
#: ``|P(A,T) - P(A)P(T)| <= TIE_TOL`` is a tie: the association's sign is 0.
TIE_TOL = 1e-12
#: The kinds of language model a probe takes; ``auto`` reads it from the model's config.json.
MODEL_TYPES = ("auto", "masked", "causal")


def canonical_direction(direction, param: str = "direction") -> str:
    """Return the canonical name of a direction given as itself or an alias.

    Parameters
    ----------
    direction : str
        ``attribute_to_task``, ``task_to_attribute`` or an alias (``A->T``, ``T->A``, ``AT``,
        ``TA``, ``a2t``, ``t2a``; any case).
    param : str
        Parameter name used in the error message.

    Raises
    ------
    BiasampError
        Naming the parameter, the accepted values and what was given.
    """
    if isinstance(direction, str):
        found = DIRECTION_ALIASES.get(direction.strip().lower())
        if found is not None:
            return found
    raise BiasampError(
        f"{param} must be one of {{'attribute_to_task', 'task_to_attribute'}} "
        f"(aliases 'A->T', 'T->A', 'AT', 'TA'); got {direction!r}"
    )
