"""The WinoBias occupation table: groups (male/female-biased), list spellings, shares."""

from __future__ import annotations

from functools import lru_cache

import pandas as pd

from ._table import MissingEntriesError, data_file, file_entry

__all__ = ["WINOBIAS_FILE", "WINOBIAS_PROVENANCE", "groups_for", "winobias_aliases",
           "winobias_file_entry", "winobias_groups", "winobias_table"]

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


@lru_cache(maxsize=1)
def winobias_aliases() -> dict[str, str]:
    """WinoBias list names that differ from the paper's words (mechanic -> mechanician)."""
    t = winobias_table()
    return {str(a): str(o) for a, o in zip(t["winobias_list_name"], t["occupation"]) if a != o}


def winobias_groups() -> dict[str, str]:
    """Occupation -> ``"male_biased"`` / ``"female_biased"`` for the 40 WinoBias occupations.

    Includes the WinoBias list spellings (``construction worker``, ``mechanic``,
    ``tailor``) besides the paper's words (``constructor``, ``mechanician``, ``sewer``).

    Examples
    --------
    >>> g = winobias_groups()
    >>> g["nurse"], g["janitor"], g["tailor"], len(g)
    ('female_biased', 'male_biased', 'female_biased', 43)
    """
    t = winobias_table()
    out = dict(zip(t["occupation"].astype(str), t["winobias_group"].astype(str)))
    for alias, occ in winobias_aliases().items():
        out[alias] = out[occ]
    return out


def groups_for(tasks, source: str) -> list[str]:
    """The WinoBias group of each task; :class:`MissingEntriesError` for tasks without one."""
    g = winobias_groups()
    missing = [t for t in tasks if t not in g]
    if missing:
        raise MissingEntriesError(
            source, missing, (), sorted(g), (),
            note="the association needs a WinoBias group (male_biased/female_biased) per task; "
                 "use 'uniform:SOURCE' to take the signs from another source")
    return [g[t] for t in tasks]
