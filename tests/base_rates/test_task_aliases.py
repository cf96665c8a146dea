"""The one task alias table: WinoBias sentence spellings, the 40-word list and the base-rate
sources meet through it, and every source records what it substituted."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from biasamp import BiasampError
from biasamp._files import data_dir
from biasamp.base_rates import MissingEntriesError, get_source
from biasamp.tasks import load_tasks, task_aliases

HS = ["he", "she"]
SENTENCE_SPELLINGS = ["mechanic", "construction worker", "tailor"]
PAPER_SPELLINGS = ["mechanician", "constructor", "sewer"]


def test_the_table_and_its_api():
    a = task_aliases()
    assert a.pairs == dict(zip(SENTENCE_SPELLINGS, PAPER_SPELLINGS))
    assert a.file == "task_aliases.csv"
    assert a.canonical("tailor") == "sewer" and a.canonical("nurse") == "nurse"
    assert a.spellings("construction worker") == ("construction worker", "constructor")
    assert a.spellings("constructor") == ("constructor", "construction worker")
    assert len(a.sha256) == 64


def test_the_table_agrees_with_the_winobias_list_names():
    """The WinoBias table's list-name column is data, the alias table the one lookup: they
    must name the same renames."""
    t = pd.read_csv(data_dir("base_rates") / "winobias40_pct_female.csv")
    renamed = {a: o for a, o in zip(t["winobias_list_name"], t["occupation"]) if a != o}
    assert renamed == task_aliases().pairs
    # and the WinoBias sentences' spellings are exactly the lists' spellings
    words = load_tasks("winobias40").words
    assert all(o in words for o in task_aliases().pairs.values())


@pytest.mark.parametrize(
    "source",
    [
        "uniform",
        "labor-2016",
        "labor-2016-shares",
        "labor-2022",
        "wikitext103-valtest",
        "uniform:labor-2016",
        "labor-2016-wang2021",
        "uniform-wang2021",
        "wikitext103-valtest-wang2021",
    ],
)
def test_every_source_resolves_the_sentence_spellings_and_says_so(source):
    tasks = ["nurse"] + SENTENCE_SPELLINGS
    if source.startswith(("labor-2016", "uniform:labor")) and source != "labor-2016-shares":
        tasks = ["nurse", "janitor", "construction worker", "tailor"]  # no 'mechanic' count
    if source == "labor-2022":
        tasks = ["nurse", "mechanic", "construction worker", "tailor"]
    direction = "task_to_attribute"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = get_source(source).table(tasks, HS, direction=direction)
        ref = get_source(source).table(
            [task_aliases().canonical(t) for t in tasks], HS, direction=direction
        )
    assert list(got.joint.index) == tasks
    np.testing.assert_array_equal(got.joint.to_numpy(), ref.joint.to_numpy())
    if ref.association is not None:
        np.testing.assert_array_equal(got.association.to_numpy(), ref.association.to_numpy())
    used = {t: task_aliases().canonical(t) for t in tasks if t in task_aliases().pairs}
    # uniform:SOURCE takes any task for its joint; its signs' source records the aliases
    prov = got.provenance.get("association_provenance", got.provenance)
    assert prov["task_aliases"] == used
    assert prov["task_aliases_file"]["sha256"] == task_aliases().sha256
    assert "task_aliases" not in ref.provenance


def test_a_user_table_spelled_the_winobias_way(tmp_path):
    """The reverse direction: a table with 'mechanic', asked for 'mechanician'."""
    p = tmp_path / "t.csv"
    p.write_text("task,he,she\nmechanic,9,1\nnurse,1,9\n", encoding="utf-8")
    t = get_source(f"file:{p}").table(["mechanician", "nurse"], HS)
    assert list(t.joint.index) == ["mechanician", "nurse"]
    assert t.joint.loc["mechanician", "he"] == 9
    assert t.provenance["task_aliases"] == {"mechanician": "mechanic"}


def test_missing_tasks_still_fail_and_two_spellings_conflict():
    with pytest.raises(
        MissingEntriesError,
        match=r"tasks \['astronaut'\] not in base-rate "
        r"source 'labor-2016-shares'",
    ):
        get_source("labor-2016-shares").table(["tailor", "astronaut"], HS)
    # the most informative error: labor-2016 has no employment count for 'mechanician'
    with pytest.raises(MissingEntriesError, match=r"tasks \['mechanic'\]|no employment count"):
        get_source("labor-2016").table(["mechanic", "nurse"], HS)
    with pytest.raises(
        BiasampError,
        match=r"tasks \['mechanic', 'mechanician'\] are spellings "
        r"of the same occupation",
    ):
        get_source("labor-2016-shares").table(["mechanic", "mechanician"], HS)
