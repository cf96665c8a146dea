"""The WinoBias occupation table: groups (male/female-biased), list spellings, shares."""

from __future__ import annotations

from functools import lru_cache

import pandas as pd

from ._table import MissingEntriesError, data_file, file_entry

__all__ = ["WINOBIAS_FILE", "WINOBIAS_PROVENANCE", "groups_for", "winobias_file_entry",
           "winobias_groups", "winobias_table"]

#: The shipped WinoBias table (40 occupations: group, pct_female, employment, list name).
WINOBIAS_FILE = "winobias40_pct_female.csv"

#: Citation of the WinoBias occupation groups.
WINOBIAS_PROVENANCE = {
    "citation": "Zhao et al. (2018), Gender Bias in Coreference Resolution: Evaluation and "
                "Debiasing Methods, NAACL (WinoBias occupation groups)",
    "url": "https://github.com/uclanlp/corefBias",
}


@lru_cache(maxsize=1)
def winobias_table() -> pd.DataFrame:
    """The 40 rows of ``winobias40_pct_female.csv`` in file order."""
    return pd.read_csv(data_file(WINOBIAS_FILE), dtype={"occupation": str})


def winobias_file_entry() -> dict:
    """Provenance entry (name, sha256) of the WinoBias table."""
    return file_entry(data_file(WINOBIAS_FILE))


def _groups() -> dict[str, str]:
    t = winobias_table()
    return dict(zip(t["occupation"].astype(str), t["winobias_group"].astype(str)))


def winobias_groups() -> dict[str, str]:
    """Occupation -> ``"male_biased"`` / ``"female_biased"`` for the 40 WinoBias occupations.

    Includes the other spellings of the task alias table (:func:`biasamp.tasks.task_aliases`:
    ``construction worker``, ``mechanic``, ``tailor``) besides the paper's words
    (``constructor``, ``mechanician``, ``sewer``).

    Examples
    --------
    >>> g = winobias_groups()
    >>> g["nurse"], g["janitor"], g["tailor"], len(g)
    ('female_biased', 'male_biased', 'female_biased', 43)
    """
    from ..tasks import task_aliases

    out = _groups()
    for alias, occ in task_aliases().pairs.items():
        if occ in out:
            out[alias] = out[occ]
    return out


def groups_for(tasks, source: str) -> list[str]:
    """The WinoBias group of each task (the paper's spellings; other spellings are resolved
    by :meth:`BaseRateSource.table` through the alias table); :class:`MissingEntriesError`
    for tasks without one."""
    g = _groups()
    missing = [t for t in tasks if t not in g]
    if missing:
        raise MissingEntriesError(
            source, missing_tasks=missing, tasks=sorted(g),
            note="the association needs a WinoBias group (male_biased/female_biased) per task; "
                 "use 'uniform:SOURCE' to take the signs from another source")
    return [g[t] for t in tasks]
