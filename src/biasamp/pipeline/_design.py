"""What a probe measures, apart from any model: :class:`Design`.

Which templates there are, which tasks each one covers (a bound template: its own tasks; a
crossed one: every task), the groups of each template, the attributes. Built once by
:func:`~.prepare.prepare`, read by the table building and the evaluation
(:func:`~.scored.evaluate_scores`), saved in ``results.json`` (``provenance["design"]``) and
read back by :func:`~.compare.paired_differences`, so no step works it out again (compare
guessed it from the NaN rows of the tables; results written before the design was saved
still are read that way).

>>> d = Design(("t1", "t2"), ("nurse", "cook"), ("he", "she"), (("nurse",), ()), ((), ()), ())
>>> d.bound, d.expected().tolist()
(True, [[True, False], [True, True]])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._pooled import coverage

__all__ = ["Design"]


@dataclass(frozen=True)
class Design:
    """The templates, tasks and attributes of a probe and how templates cover tasks.

    Attributes
    ----------
    template_ids : tuple of str
        In the order of the probability tables.
    tasks, attributes : tuple of str
        Rows and columns of every table.
    template_tasks : tuple of tuple of str
        Per template, the tasks a bound template covers; ``()``: every task (crossed).
    template_groups : tuple of tuple of str
        Per template, the groups it belongs to.
    group_labels : tuple of str
        The groups in the set's order.
    """

    template_ids: tuple
    tasks: tuple
    attributes: tuple
    template_tasks: tuple
    template_groups: tuple
    group_labels: tuple

    @property
    def bound(self) -> bool:
        """Some template covers only its own tasks (the tables are pooled per task)."""
        return any(self.template_tasks)

    @property
    def grouped(self) -> bool:
        return any(self.template_groups)

    def coverage(self):
        """``(cover, strata)`` as :func:`~._pooled.coverage` gives them (None, None:
        crossed)."""
        return coverage(self.template_tasks if self.bound else None, list(self.tasks),
                        len(self.template_ids))

    def expected(self) -> np.ndarray:
        """(n_templates, n_tasks) of bool: the task rows each template fills."""
        cover, _ = self.coverage()
        if cover is None:
            return np.ones((len(self.template_ids), len(self.tasks)), dtype=bool)
        return cover

    def select(self, template_ids) -> Design:
        """The design of some of the templates (in the order given)."""
        at = {t: i for i, t in enumerate(self.template_ids)}
        idx = [at[str(t)] for t in template_ids]
        return Design(tuple(self.template_ids[i] for i in idx), self.tasks, self.attributes,
                      tuple(self.template_tasks[i] for i in idx),
                      tuple(self.template_groups[i] for i in idx), self.group_labels)

    def to_dict(self) -> dict:
        """JSON-ready (``results.json``)."""
        return {"template_ids": list(self.template_ids), "tasks": list(self.tasks),
                "attributes": list(self.attributes),
                "template_tasks": [list(t) for t in self.template_tasks],
                "template_groups": [list(g) for g in self.template_groups],
                "group_labels": list(self.group_labels)}

    @classmethod
    def from_dict(cls, data: dict) -> Design:
        return cls(tuple(map(str, data["template_ids"])), tuple(map(str, data["tasks"])),
                   tuple(map(str, data["attributes"])),
                   tuple(tuple(map(str, t)) for t in data["template_tasks"]),
                   tuple(tuple(map(str, g)) for g in data["template_groups"]),
                   tuple(map(str, data["group_labels"])))
