"""Labor base rates from BLS CPS Table 11 (2022), WinoBias words mapped to one row each:
gender, race, ethnicity and the named gender x race independence assumption (docs/groups.md)."""

from __future__ import annotations

import warnings
from functools import lru_cache

import pandas as pd

from .._errors import IndependenceAssumptionWarning
from ._table import (
    BaseRateSource,
    BaseRateTable,
    MissingEntriesError,
    data_file,
    file_entry,
    select_entries,
)

_MAPPING = "winobias40_to_bls_2020_2022.csv"
_TABLE = "bls_cpsaat11_2022_clean.csv"

#: The race groups and their Table 11 columns (percent of the employed).
RACE_COLUMNS = {
    "white": "pct_white",
    "black": "pct_black_or_african_american",
    "asian": "pct_asian",
}
ETHNICITY_GROUPS = ("hispanic", "not-hispanic")
GENDERS = {"woman": "pct_women", "man": None}  # man: 100 - pct_women


@lru_cache(maxsize=1)
def _rows() -> tuple[pd.DataFrame, list[str]]:
    """Per mapped WinoBias word: its Table 11 row (employed, percentages); the unmapped words."""
    m = pd.read_csv(data_file(_MAPPING), dtype=str)
    bls = pd.read_csv(data_file(_TABLE), dtype={"occupation": str}).set_index("occupation")
    keep = m[(m["mapping"] != "none") & m["bls_title"].notna()]
    cols = [
        "total_employed_thousands",
        "pct_women",
        *RACE_COLUMNS.values(),
        "pct_hispanic_or_latino",
    ]
    rows = bls.loc[keep["bls_title"], cols].astype(float)
    rows.index = pd.Index(keep["occupation"].tolist(), name="task")
    rows.insert(0, "bls_title", keep["bls_title"].tolist())
    rows.insert(1, "mapping", keep["mapping"].tolist())
    return rows, m.loc[~m.index.isin(keep.index), "occupation"].tolist()


#: Groups of another kind than a source holds: (is one, a group of the kind, the note).
_OTHER_KINDS = (
    (
        lambda a: a in RACE_COLUMNS,
        "white",
        "Hispanic or Latino is an ethnicity (of any race): race groups are "
        "another partition of the same workers; probe them against 'labor-2022-race'",
    ),
    (
        lambda a: a in ETHNICITY_GROUPS,
        "hispanic",
        "Hispanic or Latino is an ethnicity in CPS Table 11 (of any race), not a race: "
        "a race source cannot hold it; probe it on its own against 'labor-2022-ethnicity'",
    ),
    (
        lambda a: "-" in a and a.rsplit("-", 1)[1] in GENDERS,
        None,
        "gender x race groups are not in CPS Table 11: give their table as "
        "'file:PATH.csv', or name the assumption that gender and race are independent "
        "within an occupation: 'labor-2022-gender-race-independent'",
    ),
)


class _Labor2022(BaseRateSource):
    """A source of the mapped Table 11 rows: ``_columns(rows)`` its joint (one column per
    group), ``_provenance`` its own keys; ``groups``: those it holds (another kind refused)."""

    groups: tuple[str, ...] = ()
    method = ""

    def _table(self, tasks, attributes, direction):
        for is_kind, member, note in _OTHER_KINDS if self.groups else ():
            found = [a for a in attributes if is_kind(a)]
            if found and member not in self.groups:
                raise MissingEntriesError(
                    self.name, missing_attributes=found, attributes=list(self.groups), note=note
                )
        rows, none = _rows()
        note = f"no single BLS 2022 row for {none} (mapping 'none')"
        note = note if set(tasks) & set(none) else ""
        joint = select_entries(self._columns(rows), tasks, attributes, self.name, note=note)
        prov = {
            "name": self.name,
            "year": 2022,
            "citation": "U.S. Bureau of Labor Statistics, Current Population Survey, Table 11 "
            "(2022 annual averages): employed persons by detailed occupation, sex, race, and "
            "Hispanic or Latino ethnicity",
            "url": "https://www.bls.gov/cps/cpsaat11.htm",
            "license": "US federal government work (public domain)",
            "method": self.method,
            "no_bls_row": list(none),
            "rows": {t: rows.loc[t, "bls_title"] for t in tasks},
            "files": [file_entry(data_file(_MAPPING)), file_entry(data_file(_TABLE))],
        } | self._provenance(rows, tasks, attributes)
        return BaseRateTable(joint, provenance=prov | {"kind": "statistics", "about": self.about})

    def _provenance(self, rows, tasks, attributes) -> dict:
        return {}


class Labor2022Source(_Labor2022, registered=True):
    name = "labor-2022"
    description = "BLS CPS 2022 Table 11 via the WinoBias -> BLS mapping (35 of 40)"
    about = (
        "US labor statistics (BLS CPS Table 11, 2022 annual averages) through a "
        "WinoBias -> BLS occupation mapping (treated as fixed)"
    )
    method = (
        "joint[t, he] = employed * (1 - pct_women/100), joint[t, she] = "
        "employed * pct_women/100 (thousands) of the mapped BLS row"
    )

    @staticmethod
    def _columns(rows):
        emp, pct = rows["total_employed_thousands"], rows["pct_women"] / 100.0
        return pd.DataFrame({"he": emp * (1.0 - pct), "she": emp * pct})

    def _provenance(self, rows, tasks, attributes) -> dict:
        return {
            "citation": "U.S. Bureau of Labor Statistics, Current Population Survey, "
            "Table 11 (2022 annual averages)",
            "rows": {t: {k: rows.loc[t, k] for k in ("bls_title", "mapping")} for t in tasks},
        }


class Labor2022RaceSource(_Labor2022, registered=True):
    name = "labor-2022-race"
    description = "BLS CPS 2022 Table 11: White / Black / Asian shares (35 WinoBias occupations)"
    about = (
        "US labor statistics (BLS CPS Table 11, 2022): employed x share of White, Black or "
        "African American and Asian workers, renormalised over the groups probed"
    )
    groups = tuple(RACE_COLUMNS)
    method = (
        "joint[t, g] = employed_thousands * pct_g / 100 of the mapped Table 11 row, for g in "
        "white, black (Black or African American), asian; renormalised over the groups probed"
    )

    @staticmethod
    def _columns(rows):
        emp = rows["total_employed_thousands"]
        return pd.DataFrame({g: emp * rows[c] / 100.0 for g, c in RACE_COLUMNS.items()})

    def _provenance(self, rows, tasks, attributes) -> dict:
        remainder = (100.0 - sum(rows[RACE_COLUMNS[a]] for a in attributes)).round(6)
        return {
            "remainder_pct": {t: float(remainder[t]) for t in tasks},
            "remainder_note": "percent of each occupation's employed in none of the groups probed "
            "(other races, two or more races; Table 11's race columns overlap no other way)",
        }


class Labor2022EthnicitySource(_Labor2022, registered=True):
    name = "labor-2022-ethnicity"
    description = "BLS CPS 2022 Table 11: Hispanic or Latino vs not (35 WinoBias occupations)"
    about = (
        "US labor statistics (BLS CPS Table 11, 2022): employed x share of Hispanic or "
        "Latino workers (any race) and the rest"
    )
    groups = ETHNICITY_GROUPS
    method = (
        "joint[t, hispanic] = employed_thousands * pct_hispanic_or_latino / 100, "
        "joint[t, not-hispanic] = employed_thousands * (1 - pct_hispanic_or_latino / 100)"
    )

    @staticmethod
    def _columns(rows):
        emp, pct = rows["total_employed_thousands"], rows["pct_hispanic_or_latino"] / 100.0
        return pd.DataFrame({"hispanic": emp * pct, "not-hispanic": emp * (1.0 - pct)})


class Labor2022GenderRaceSource(_Labor2022, registered=True):
    name = "labor-2022-gender-race-independent"
    description = "ASSUMED independence: BLS 2022 gender share x race share per occupation (warned)"
    about = (
        "ASSUMPTION, not a measurement: gender and race taken as independent within each "
        "occupation (BLS CPS Table 11, 2022: share of women or men x share of the race group); "
        "supply a real gender x race table as file:PATH.csv"
    )
    method = (
        "joint[t, race-sex] = employed_thousands * share of sex * pct_race / 100 "
        "(independence of gender and race within the occupation ASSUMED)"
    )

    @staticmethod
    def _columns(rows):
        emp, women = rows["total_employed_thousands"], rows["pct_women"] / 100.0
        return pd.DataFrame(
            {
                f"{g}-{sex}": emp * (women if sex == "woman" else 1.0 - women) * rows[c] / 100.0
                for g, c in RACE_COLUMNS.items()
                for sex in GENDERS
            }
        )

    def _provenance(self, rows, tasks, attributes) -> dict:
        return {"assumption": "gender and race are independent within each occupation"}

    def _table(self, tasks, attributes, direction):
        table = super()._table(tasks, attributes, direction)
        warnings.warn(
            f"base-rate source {self.name!r} ASSUMES gender and race are independent within "
            "each occupation (CPS Table 11 has no gender x race table); the report says so",
            IndependenceAssumptionWarning,
            stacklevel=2,
        )
        return table
