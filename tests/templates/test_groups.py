"""Groups as attributes: attribute sets, group slots, prompts with realisations, their pooling."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from biasamp import BiasampError
from biasamp.templates import (
    build_prompts,
    list_attribute_sets,
    load_attribute_set,
    load_template_set,
    pool_realisations,
    realisations,
    render_sentences,
    resolve_attributes,
    word_groups,
)

SET = """
[set]
name = "mine"
description = "d"
source = "s"
year = 2026
license = "MIT"
kind = "race"
noun = "person"

[groups.a]
terms = ["Alpha"]

[groups.b]
terms = TERMS
"""


def _write(tmp_path, text, name="mine.toml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_shipped_sets_and_their_groups():
    assert list_attribute_sets() == ["ethnicity", "gender-race", "race"]
    race = load_attribute_set("race")
    assert race.kind == "race" and list(race.groups) == ["white", "black", "asian"]
    assert [r.form("group_noun") for r in race.groups["asian"]] == [
        "Asian person",
        "Asian American person",
    ]
    gr = load_attribute_set("gender-race")
    assert [r.form("group_noun") for r in gr.groups["black-woman"]] == [
        "Black woman",
        "black woman",
        "African American woman",
    ]
    names = [g for s in list_attribute_sets() for g in load_attribute_set(s).groups]
    assert len(names) == len(set(names))  # a group name says which set it is from


def test_a_group_with_no_realisation_is_refused(tmp_path):
    p = _write(tmp_path, SET.replace("TERMS", "[]"))
    with pytest.raises(BiasampError, match=r"group 'b' has no realisation \(terms = \[\]\)"):
        load_attribute_set(p)
    ok = load_attribute_set(_write(tmp_path, SET.replace("TERMS", '["Beta", "beta"]'), "ok.toml"))
    assert [r.term for r in ok.groups["b"]] == ["Beta", "beta"]
    bad = SET.replace("TERMS", '["Beta"]').replace("[groups.a]", "[groups.he]")
    with pytest.raises(BiasampError, match="may not be named like a pronoun"):
        load_attribute_set(_write(tmp_path, bad, "he.toml"))


def test_resolve_attributes_groups_and_pronouns():
    assert resolve_attributes("black,asian") == ["black", "asian"]
    with pytest.raises(BiasampError, match="all pronouns or all groups"):
        resolve_attributes("he,asian")
    with pytest.raises(BiasampError, match=r"got 'martian'.*race: white, black, asian"):
        resolve_attributes("white,martian")


def test_an_attribute_set_by_name_or_file_stands_for_its_groups(tmp_path):
    assert resolve_attributes("race") == ["white", "black", "asian"]
    assert resolve_attributes(["ethnicity"]) == ["hispanic", "not-hispanic"]
    p = _write(tmp_path, SET.replace("TERMS", '["Beta", "beta"]'))
    assert resolve_attributes(str(p)) == ["a", "b"]  # file order
    t2a = build_prompts("groups", [str(p)], ["nurse", "cook"], direction="T->A")
    assert t2a.loc[0, "candidates"] == ("An Alpha person", "A Beta person", "A beta person")
    a2t = build_prompts("groups", str(p), ["nurse", "cook"], direction="A->T")
    assert a2t["attribute"].tolist()[:3] == ["a", "b", "b"]
    assert {
        a: [r.term for r in rs]
        for a, rs in realisations(load_template_set("groups"), [str(p)]).items()
    } == {"a": ["Alpha"], "b": ["Beta", "beta"]}
    with pytest.raises(BiasampError, match="attributes must not repeat a name"):
        resolve_attributes(f"{p},a")
    with pytest.raises(
        BiasampError, match=r"^attributes: attribute set file not found: '.*no\.toml'"
    ):
        resolve_attributes(str(tmp_path / "no.toml"))
    with pytest.raises(BiasampError, match=r"^attributes: attribute set '.*mine\.toml'.* has no "):
        resolve_attributes(str(_write(tmp_path, SET.replace("TERMS", "[]"))))


def test_prompts_have_every_realisation_with_its_article():
    t2a = build_prompts("groups", "black,asian", ["nurse", "cook"], direction="T->A")
    assert t2a.loc[0, "prompt"] == "[BLANK] is a new nurse."
    assert t2a.loc[0, "candidates"] == (
        "A Black person",
        "A black person",
        "An African American person",
        "An Asian person",
        "An Asian American person",
    )
    assert len(t2a) == 22 * 2  # one prompt per (template, task)
    a2t = build_prompts("groups", "black,asian", ["nurse", "cook"], direction="A->T")
    assert len(a2t) == 22 * 5  # one prompt per (template, realisation)
    assert a2t["prompt"].tolist()[:3] == [
        "A Black person is a new [BLANK].",
        "A black person is a new [BLANK].",
        "An African American person is a new [BLANK].",
    ]
    assert a2t["attribute"].tolist()[:5] == ["black"] * 3 + ["asian"] * 2
    s = render_sentences("groups", "asian,white", ["engineer"])
    assert "The customer said that the engineer was an Asian American person." in set(s["sentence"])


def test_a_group_has_no_realisation_in_a_pronoun_set_and_vice_versa():
    with pytest.raises(BiasampError, match="have no realisation in template set 'adjectives'"):
        realisations(load_template_set("adjectives"), ["white", "black"])
    with pytest.raises(BiasampError, match=r"pronouns \['he', 'she'\] have no realisation"):
        build_prompts("groups", "he,she", ["nurse", "cook"], direction="T->A")


def test_a_template_cannot_mix_pronoun_and_group_slots(tmp_path):

    text = """
[set]
name = "mix"
description = "d"
source = "s"
year = 2026
license = "MIT"
agreement = true

[[template]]
id = "m1"
text = "{Attribute} met {a} {group_noun} who is a {task}."
"""
    with pytest.raises(BiasampError, match="mixes pronoun slots and group slots"):
        load_template_set(_write(tmp_path, text, "mix.toml"))


def test_pooling_by_hand():
    # T->A: one prompt, candidates grouped 2 + 1: the groups' probabilities are sums
    rows = pd.DataFrame({"template_id": ["t"], "attribute": [None], "task": ["nurse"]})
    lp = np.log([0.1, 0.3, 0.6])
    _, p, logp = pool_realisations(
        "task_to_attribute", rows, [np.array([0.1, 0.3, 0.6])], [lp], sizes={"a": 2, "b": 1}
    )
    np.testing.assert_allclose(p[0], [0.4, 0.6], rtol=0, atol=1e-15)
    np.testing.assert_allclose(logp[0], np.log([0.4, 0.6]), rtol=0, atol=1e-15)
    # A->T: a prompt per realisation; P(task | group) is the mean over its realisations
    rows = pd.DataFrame(
        {"template_id": ["t"] * 3, "attribute": ["a", "a", "b"], "task": [None] * 3}
    )
    probs = [np.array([0.2, 0.8]), np.array([0.6, 0.4]), np.array([0.5, 0.5])]
    raw = [np.log(x) - 1.0 for x in probs]  # raw log probabilities (mass e^-1)
    out, p, logp = pool_realisations("attribute_to_task", rows, probs, raw, sizes={"a": 2, "b": 1})
    assert out["attribute"].tolist() == ["a", "b"]
    np.testing.assert_allclose(p, [[0.4, 0.6], [0.5, 0.5]], rtol=0, atol=1e-15)
    np.testing.assert_allclose(logp[0], np.log([0.4, 0.6]) - 1.0, rtol=0, atol=1e-12)
    assert math.isclose(float(np.exp(logp[1][0])), 0.5 * math.exp(-1.0))


def test_word_groups_for_counting():
    assert word_groups("race") == {
        "white": ["white"],
        "black": ["black", "african american"],
        "asian": ["asian", "asian american"],
    }
    assert word_groups("gender-race")["white-woman"] == ["white woman"]
