"""The template format for benchmark sentences: pronoun cases, agreeing verbs, repeated
slots, per-attribute contexts, templates bound to their own tasks, groups; and their errors."""

from __future__ import annotations

import pytest

from biasamp import BiasampError
from biasamp.templates import build_prompts, load_template_set, render_sentences, template_tasks
from biasamp.templates._slots import ATTRIBUTE_FORMS, PRONOUN_CASES

HEADER = """[set]
name = "t"
description = "test set"
source = "test"
year = 2024
license = "MIT"
agreement = {agreement}
{extra}
"""


def _set(tmp_path, templates: str, agreement: str = "true", extra: str = ""):
    p = tmp_path / "s.toml"
    p.write_text(
        HEADER.format(agreement=agreement, extra=extra) + "\n" + templates, encoding="utf-8"
    )
    return p


def _tpl(text: str, tid: str = "x", extra: str = "") -> str:
    return f'[[template]]\nid = "{tid}"\ntext = "{text}"\n{extra}\n'


# ---------------------------------------------------------------------------------------
# pronoun cases and verbs
# ---------------------------------------------------------------------------------------


def test_every_pronoun_case_renders_for_he_she_they(tmp_path):
    text = (
        "{Attribute} saw the {task} with {attribute_possessive} dog, the dog saw "
        "{attribute_accusative}; the dog is {attribute_possessive_pronoun} and "
        "{attribute} washed {attribute_reflexive}."
    )
    s = load_template_set(
        _set(
            tmp_path,
            _tpl(
                text,
                extra='context = "per-attribute"\nmask = { task_to_attribute = ["attribute#1"] }',
            ),
        )
    )
    got = {a: s.render("x", a, "cook") for a in ("he", "she", "they")}
    assert got == {
        "he": "He saw the cook with his dog, the dog saw him; the dog is his and he washed "
        "himself.",
        "she": "She saw the cook with her dog, the dog saw her; the dog is hers and she washed "
        "herself.",
        "they": "They saw the cook with their dog, the dog saw them; the dog is theirs and they "
        "washed themselves.",
    }
    # five cases, one table entry each, plus the noun
    assert set(PRONOUN_CASES) == set(ATTRIBUTE_FORMS) - {"attribute_noun"}
    assert sorted(PRONOUN_CASES.values()) == [
        "accusative",
        "nominative",
        "possessive determiner",
        "possessive pronoun",
        "reflexive",
    ]


@pytest.mark.parametrize(
    "verb, he, they",
    [
        ("{verb:has|have}", "has", "have"),
        ("{verb:does|do}", "does", "do"),
        ("{verb:wants|want}", "wants", "want"),
        ("{verb:isn't|aren't}", "isn't", "aren't"),
        ("{be}", "is", "are"),
        ("{was}", "was", "were"),
    ],
)
def test_agreement_of_any_verb_with_they_he_she(tmp_path, verb, he, they):
    s = load_template_set(_set(tmp_path, _tpl("{Attribute} " + verb + " the {task}.")))
    assert s.render("x", "he", "cook") == f"He {he} the cook."
    assert s.render("x", "she", "cook") == f"She {he} the cook."
    assert s.render("x", "they", "cook") == f"They {they} the cook."
    # the verb is attribute-dependent: the T->A blank covers it, candidates carry it
    df = build_prompts(s, "he,she,they", ["cook"], direction="T->A")
    assert df.loc[0, "prompt"] == "[BLANK] the cook."
    assert df.loc[0, "candidates"] == (f"He {he}", f"She {he}", f"They {they}")
    # without agreement every pronoun takes the singular form (the compat sets' "they is")
    s = load_template_set(
        _set(tmp_path, _tpl("{Attribute} " + verb + " the {task}."), agreement="false")
    )
    assert s.render("x", "they", "cook") == f"They {he} the cook."
    assert build_prompts(s, "he,they", ["cook"], direction="T->A").loc[0, "prompt"] == (
        f"[BLANK] {he} the cook."
    )


def test_capitalised_verb_slot(tmp_path):
    s = load_template_set(
        _set(tmp_path, _tpl("The {task} left. {Attribute} {Verb:Was|Were} late."))
    )
    assert s.render("x", "they", "cook") == "The cook left. They Were late."


# ---------------------------------------------------------------------------------------
# repeated slots and per-attribute contexts
# ---------------------------------------------------------------------------------------


def test_a_repeated_slot_renders_the_same_attribute_and_the_mask_names_one_copy(tmp_path):
    extra = 'context = "per-attribute"\nmask = { task_to_attribute = ["attribute#2"] }'
    s = load_template_set(
        _set(
            tmp_path, _tpl("{Attribute} told the {task} that {attribute} {was} late.", extra=extra)
        )
    )
    assert s.render("x", "she", "cook") == "She told the cook that she was late."
    assert s.render("x", "they", "cook") == "They told the cook that they were late."
    df = build_prompts(s, "he,she,they", ["cook", "nurse"], direction="T->A")
    # one row per (task, attribute), each in its own rendering, with its own candidate alone
    assert len(df) == 6
    assert list(df["attribute"]) == ["he", "she", "they"] * 2
    assert list(df["task"]) == ["cook"] * 3 + ["nurse"] * 3
    assert df.loc[0, "prompt"] == "He told the cook that [BLANK] was late."
    assert df.loc[2, "prompt"] == "They told the cook that [BLANK] were late."
    assert list(df["candidates"][:3]) == [("he",), ("she",), ("they",)]
    # A->T is unaffected: every copy rendered, the task masked
    at = build_prompts(s, "he,they", ["cook", "nurse"], direction="A->T")
    assert at.loc[1, "prompt"] == "They told the [BLANK] that they were late."
    assert at.loc[1, "candidates"] == ("cook", "nurse")


def test_default_mask_names_the_copies_of_a_repeated_slot(tmp_path):
    s = load_template_set(_set(tmp_path, _tpl("The {task} said {attribute} {attribute} {be} ok.")))
    assert s.templates[0].mask["task_to_attribute"] == ("attribute#1", "attribute#2", "be")
    df = build_prompts(s, "he,they", ["cook"], direction="T->A")
    assert df.loc[0, "candidates"] == ("he he is", "they they are")


@pytest.mark.parametrize(
    "text, extra, pattern",
    [
        (
            "{Attribute} told the {task} that {attribute} left.",
            'mask = { task_to_attribute = ["attribute"] }',
            r"slot 'attribute' must occur exactly once in the text; it occurs 2 times .*name one copy: "
            r"'attribute#1' or 'attribute#2'",
        ),
        (
            "{Attribute} told the {task} that {attribute} left.",
            'context = "per-attribute"\nmask = { task_to_attribute = ["attribute#3"] }',
            r"names copy 'attribute#3', but the text has 2 \{attribute\} slot\(s\)",
        ),
        (
            "{Attribute} told the {task} that {attribute} left.",
            'mask = { task_to_attribute = ["attribute#2"] }',
            r"must cover every slot that depends on the attribute, else the prompt leaks the answer; "
            r"missing \['attribute#1'\].*set context = \"per-attribute\"",
        ),
        (
            "{Attribute} told the {task} that {attribute} left.",
            'context = "per-attribute"\nmask = { task_to_attribute = ["task"] }',
            r"mask.task_to_attribute must not contain 'task'",
        ),
        (
            "{Attribute} saw {a} big {task}.",
            'context = "per-attribute"\nmask = { task_to_attribute = ["a"] }',
            r"must cover at least one slot that depends on the attribute",
        ),
        (
            "{Attribute} left the {task}.",
            'context = "mixed"',
            r"context must be one of .*got 'mixed'",
        ),
    ],
)
def test_repeated_slot_and_context_errors(tmp_path, text, extra, pattern):
    with pytest.raises(BiasampError, match=pattern):
        load_template_set(_set(tmp_path, _tpl(text, extra=extra)))


@pytest.mark.parametrize(
    "text, pattern",
    [
        (
            "{attribute_dative} saw the {task}.",
            r"unknown slot \{attribute_dative\} \(did you mean 'attribute_accusative'\?\)",
        ),
        (
            "{attribute} {verb} the {task}.",
            r"the slot \{verb\} needs its two forms, singular\|plural",
        ),
        ("{attribute} {verb:has} the {task}.", r"must give exactly two non-empty forms"),
        ("{attribute} {verb:has|} the {task}.", r"must give exactly two non-empty forms"),
        ("{attribute} {be:is|are} the {task}.", r"only the generic \{verb:...\} slot takes forms"),
        ("The {task} {verb:has|have} {attribute_accusative}.", r"need an \{attribute\} slot"),
    ],
)
def test_slot_errors(tmp_path, text, pattern):
    with pytest.raises(BiasampError, match=pattern):
        load_template_set(_set(tmp_path, _tpl(text)))


# ---------------------------------------------------------------------------------------
# bound templates and groups
# ---------------------------------------------------------------------------------------

BOUND = (
    _tpl("The {task} said {attribute} {was} late.", "b1", 'task = "nurse"\ngroups = ["g"]')
    + _tpl(
        "The {task} said {attribute} {was} early.",
        "b2",
        'tasks = ["cook", "construction worker"]\ngroups = ["g", "h"]',
    )
    + _tpl("{Attribute} {be} the {task}.", "c")
)


def test_bound_templates_are_never_crossed(tmp_path):
    s = load_template_set(_set(tmp_path, BOUND))
    assert s.bound and s.tasks == ("nurse", "cook", "construction worker")
    assert s.template("b1").tasks == ("nurse",) and not s.template("c").bound
    df = build_prompts(s, "he,she", ["nurse", "cook", "baker", "constructor"], direction="T->A")
    rows = list(zip(df["template_id"], df["task"]))
    assert rows == [
        ("b1", "nurse"),
        ("b2", "cook"),
        ("b2", "constructor"),
        ("c", "nurse"),
        ("c", "cook"),
        ("c", "baker"),
        ("c", "constructor"),
    ]
    # the vocabulary's 'constructor' renders b2's own spelling (task alias table)
    assert df.loc[2, "prompt"] == "The construction worker said [BLANK] early."
    # A->T: one prompt per (template, attribute), every vocabulary word a candidate
    at = build_prompts(s, "he,she", ["nurse", "cook", "baker", "constructor"], direction="A->T")
    assert list(at["template_id"]) == ["b1", "b1", "b2", "b2", "c", "c"]
    assert at.loc[0, "prompt"] == "The [BLANK] said he was late."
    assert at.loc[0, "candidates"] == ("nurse", "cook", "baker", "constructor")
    sent = render_sentences(s, "he,they", ["nurse", "baker"])
    assert list(sent["sentence"]) == [
        "The nurse said he was late.",
        "The nurse said they were late.",
        "He is the nurse.",
        "He is the baker.",
        "They are the nurse.",
        "They are the baker.",
    ]
    assert template_tasks(s, ["baker"])["b1"] == []


def test_groups_and_select(tmp_path):
    s = load_template_set(_set(tmp_path, BOUND, extra='[set.groups]\ng = "first"\nh = "second"'))
    assert dict(s.groups) == {"g": "first", "h": "second"}
    assert s.select(group="h").ids == ["b2"]
    assert s.select(group="g").ids == ["b1", "b2"]
    with pytest.raises(
        BiasampError,
        match=r"no template of set 't' has .*group='z'.*groups: "
        r"\['g', 'h'\]",
    ):
        s.select(group="z")


def test_a_vocabulary_task_without_template_is_an_error(tmp_path):
    s = load_template_set(_set(tmp_path, BOUND.split('[[template]]\nid = "c"')[0]))
    with pytest.raises(
        BiasampError,
        match=r"tasks: 1 task\(s\) have no template in set 't' "
        r"\('baker'\); its templates are bound",
    ):
        build_prompts(s, "he,she", ["nurse", "baker"], direction="T->A")


@pytest.mark.parametrize(
    "templates, extra, pattern",
    [
        (
            _tpl("The {task} said {attribute} left.", extra='task = "nurse"\ntasks = ["cook"]'),
            "",
            r"conflicting bindings: give 'task' \(one\) or 'tasks' \(a list\), not both",
        ),
        (
            _tpl("The {task} said {attribute} left.", extra='task = "nurse"'),
            'tasks = ["cook"]',
            r"conflicting bindings: template 'x' is bound to \['nurse'\], which \[set\] tasks does "
            r"not list",
        ),
        (
            _tpl("The {task} said {attribute} left.", "a", 'task = "mechanic"')
            + _tpl("The {task} said {attribute} came.", "b", 'task = "mechanician"'),
            "",
            r"conflicting bindings: 'mechanic' and 'mechanician' are spellings of the same occupation",
        ),
        (
            _tpl("The {task} said {attribute} left.", extra='task = "nurse"'),
            'tasks = ["nurse", "cook"]',
            r"tasks \['cook'\] have no template bound to them",
        ),
        (
            _tpl("The {task} said {attribute} left."),
            'tasks = ["nurse"]',
            r"tasks lists the tasks of bound templates, but no template is bound",
        ),
        (
            _tpl("The {task} said {attribute} left.", extra="tasks = []"),
            "",
            r"tasks must be a non-empty list of task words; got \[\]",
        ),
        (
            _tpl("The {task} said {attribute} left.", extra='tasks = ["a", "a"]'),
            "",
            r"tasks lists \['a'\] more than once",
        ),
        (
            _tpl("The {task} said {attribute} left.", extra='task = " nurse"'),
            "",
            r"task must be a task word without surrounding spaces",
        ),
        (
            _tpl("The {task} said {attribute} left.", extra='groups = ["p r o"]'),
            "",
            r"groups: a label must be letters, digits",
        ),
        (
            _tpl("The {task} said {attribute} left.", extra='groups = ["pro"]'),
            '[set.groups]\nanti = "x"',
            r"templates use groups \['pro'\] that \[set.groups\] does not "
            r"describe",
        ),
        (
            _tpl("The {task} said {attribute} left.", extra='groups = ["pro"]'),
            '[set.groups]\npro = "x"\nanti = "y"',
            r"\[set.groups\] describes \['anti'\], which no "
            r"template uses",
        ),
    ],
)
def test_binding_and_group_errors(tmp_path, templates, extra, pattern):
    with pytest.raises(BiasampError, match=pattern):
        load_template_set(_set(tmp_path, templates, extra=extra))


def test_shipped_bound_sets_are_never_crossed():
    for name, n_tasks in (("winogender", 60), ("winobias", 40)):
        s = load_template_set(name)
        assert len(s.tasks) == n_tasks and all(len(t.tasks) == 1 for t in s.templates)
        df = build_prompts(s, "he,she,they", list(s.tasks), direction="T->A")
        # every T->A row is a template with its own task: no sentence with another occupation
        assert all(s.template(k).tasks == (t,) for k, t in zip(df["template_id"], df["task"]))
        per = {k: len(v) for k, v in template_tasks(s, list(s.tasks)).items()}
        assert set(per.values()) == {1}
    # WinoBias' spellings meet the 40-word list through the alias table
    df = build_prompts("winobias", "he,she", "winobias40", direction="T->A")
    assert set(df["task"]) == set(__import__("biasamp").tasks.load_tasks("winobias40").words)
    row = df[df["task"] == "sewer"].iloc[0]
    assert "tailor" in row["prompt"] and "sewer" not in row["prompt"]
