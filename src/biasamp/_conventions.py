"""Conventions shared by every part of biasamp, defined once: the two directions and their
aliases, the blank, the attributes and the defaults. Rows are tasks, columns attributes.

>>> canonical_direction("a->t"), canonical_direction(" T->A ")
('attribute_to_task', 'task_to_attribute')
>>> DIRECTION_LABELS["task_to_attribute"]
'T→A'
"""

from __future__ import annotations

from types import MappingProxyType

from ._errors import BiasampError

ATTRIBUTE_TO_TASK = "attribute_to_task"
TASK_TO_ATTRIBUTE = "task_to_attribute"
#: The two directions, in report order.
DIRECTIONS = (ATTRIBUTE_TO_TASK, TASK_TO_ATTRIBUTE)

#: Accepted spellings (compared after ``strip().lower()``) -> canonical direction.
DIRECTION_ALIASES = MappingProxyType(
    {
        alias: direction
        for direction, (a, t) in ((ATTRIBUTE_TO_TASK, "at"), (TASK_TO_ATTRIBUTE, "ta"))
        for alias in (direction, f"{a}->{t}", a + t, f"{a}2{t}")
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
    """The canonical name of a direction given as itself or an alias (``A->T``, ``T->A``,
    ``AT``, ``TA``, ``a2t``, ``t2a``; any case); ``param`` names it in the error."""
    if isinstance(direction, str):
        found = DIRECTION_ALIASES.get(direction.strip().lower())
        if found is not None:
            return found
    raise BiasampError(
        f"{param} must be one of {{'attribute_to_task', 'task_to_attribute'}} "
        f"(aliases 'A->T', 'T->A', 'AT', 'TA'); got {direction!r}"
    )
