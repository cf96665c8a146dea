"""Labor statistics ``labor-2016`` and ``labor-2016-shares`` (WinoBias' CPS numbers), and the
WinoBias occupation table they are read from: groups (male/female-biased), shares."""

from __future__ import annotations

from functools import lru_cache

import pandas as pd

from ._table import (
    BaseRateSource,
    BaseRateTable,
    MissingEntriesError,
    data_file,
    file_entry,
    select_entries,
)

__all__ = [
    "LABOR2016_PROVENANCE",
    "Labor2016SharesSource",
    "Labor2016Source",
    "WINOBIAS_PROVENANCE",
    "groups_for",
    "labor2016_files",
    "labor_counts",
    "labor_shares",
    "winobias_file_entry",
    "winobias_groups",
]

#: Citation shared by the 2016 labor sources (plain and compat).
LABOR2016_PROVENANCE = {
    "year": 2016,
    "citation": "U.S. Bureau of Labor Statistics, CPS Table 11 (c. 2015-2017 annual averages) "
    "as used by WinoBias (Zhao et al. 2018) and Wang & Russakovsky (2021)",
    "url": "https://www.bls.gov/cps/cpsaat11.htm",
    "license": "US federal government work (public domain); derived table MIT "
    "(princetonvisualai/directional-bias-amp)",
}


@lru_cache(maxsize=1)
def _labor2016() -> pd.DataFrame:
    t = winobias_table().set_index("occupation")
    return t[["winobias_group", "pct_female", "employed_thousands"]].astype(
        {"pct_female": float, "employed_thousands": float}
    )


def labor2016_files() -> list[dict]:
    """Provenance entries of the 2016 labor tables."""
    return [winobias_file_entry(), file_entry(data_file("labor_2016_winobias32.csv"))]


def labor_counts(tasks, attributes, source: str) -> pd.DataFrame:
    """employed x (1 - pct_female) (he), employed x pct_female (she), thousands."""
    t = _labor2016()
    no_emp = t["employed_thousands"].isna()
    have = t[~no_emp]
    df = pd.DataFrame(
        {
            "he": have["employed_thousands"] * (1.0 - (have["pct_female"] / 100.0)),
            "she": have["employed_thousands"] * (have["pct_female"] / 100.0),
        }
    )
    note = ""
    if any(t.index[no_emp].isin(tasks)):
        note = (
            f"no employment count for {list(t.index[no_emp])} "
            "(only pct_female is known: use 'labor-2016-shares')"
        )
    return select_entries(df, tasks, attributes, source, note=note)


def labor_shares(tasks, attributes, source: str) -> pd.DataFrame:
    """[1 - pct_female, pct_female] / 100 per occupation (40 WinoBias)."""
    she = _labor2016()["pct_female"] / 100.0
    return select_entries(pd.DataFrame({"he": 1.0 - she, "she": she}), tasks, attributes, source)


class Labor2016Source(BaseRateSource):
    """employed x (1 - pct_female) (he) and employed x pct_female (she), thousands.

    Covers the paper's 32 occupations; the 8 other WinoBias occupations have a share
    but no employment number and are reported missing (use ``labor-2016-shares``).
    """

    name = "labor-2016"
    description = "employed x share, 32 WinoBias occupations (c. 2015-2017 CPS)"
    about = (
        "US labor statistics (BLS CPS, c. 2015-2017, as used by WinoBias): employed x "
        "share of women, a survey of millions of workers (treated as fixed)"
    )
    method = (
        "joint[t, he] = employed_thousands * (1 - pct_female/100), "
        "joint[t, she] = employed_thousands * pct_female/100"
    )
    _joint = staticmethod(labor_counts)

    def _table(self, tasks, attributes, direction):
        joint = self._joint(tasks, attributes, self.name)
        prov = {
            "name": self.name,
            **LABOR2016_PROVENANCE,
            "files": labor2016_files(),
            "method": self.method,
            "kind": "statistics",
            "about": self.about,
        }
        return BaseRateTable(joint, provenance=prov)


class Labor2016SharesSource(Labor2016Source):
    """[1 - pct_female, pct_female] per occupation (40 WinoBias); P(T) is uniform."""

    name = "labor-2016-shares"
    description = "P(A|T) shares, 40 WinoBias occupations, no employment weight (P(T) uniform)"
    about = (
        "US labor statistics (BLS CPS, c. 2015-2017): share of women per occupation, "
        "no employment weight (treated as fixed)"
    )
    method = (
        "joint[t] = [1 - pct_female/100, pct_female/100]; rows sum to 1, "
        "so P(T) is uniform over the requested tasks"
    )
    _joint = staticmethod(labor_shares)


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
            source,
            missing_tasks=missing,
            tasks=sorted(g),
            note="the association needs a WinoBias group (male_biased/female_biased) per task; "
            "use 'uniform:SOURCE' to take the signs from another source",
        )
    return [g[t] for t in tasks]
