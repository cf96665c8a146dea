"""What the biasamp task files name with ``!function``: thin names for the functions of
:mod:`biasamp.harness` (the harness loads this file by its path)."""

from biasamp.harness import aggregate, dataset, process_results

__all__ = [
    "a2t",
    "a2t_ci_high",
    "a2t_ci_low",
    "dataset",
    "process_results",
    "t2a",
    "t2a_ci_high",
    "t2a_ci_low",
]

t2a = aggregate("t2a")
t2a_ci_low = aggregate("t2a_ci_low")
t2a_ci_high = aggregate("t2a_ci_high")
a2t = aggregate("a2t")
a2t_ci_low = aggregate("a2t_ci_low")
a2t_ci_high = aggregate("a2t_ci_high")
