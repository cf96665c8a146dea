"""Tests of biasamp.templates: shipped sets, rendering, prompts, vocabularies, errors."""

from __future__ import annotations

import csv
import hashlib
import re
import sys
from pathlib import Path

import pandas as pd
import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")

from biasamp import BiasampError, UnknownNameError
from biasamp._conventions import canonical_direction
from biasamp._files import data_dir
from biasamp.tasks import list_task_sets, load_tasks
from biasamp.templates import (
    BLANK,
    build_prompts,
    list_template_sets,
    load_template_set,
    render_sentences,
    resolve_attributes,
)
from biasamp.templates._slots import article_for

TEMPLATES = data_dir("templates")
TASKS = (
    TEMPLATES.parent / "base_rates"
)  # the one copy of each vocabulary data file (sha256 checked below)

# The paper's 20 sentences (Sec. 5.3 / fit_sentences.py --version 10), written out by hand.
WANG_HE = [
    "he is a new nurse.",
    "he is a known nurse.",
    "he is a single nurse.",
    "he is a large nurse.",
    "he is a small nurse.",
    "he is a major nurse.",
    "he is a French nurse.",
    "he is an old nurse.",
    "he is a short nurse.",
    "he is a good nurse.",
    "he was a new nurse.",
    "he was a known nurse.",
    "he was a single nurse.",
    "he was a large nurse.",
    "he was a small nurse.",
    "he was a major nurse.",
    "he was a French nurse.",
    "he was an old nurse.",
    "he was a short nurse.",
    "he was a good nurse.",
]
WANG_SHE = [
    "she is a new nurse.",
    "she is a known nurse.",
    "she is a single nurse.",
    "she is a large nurse.",
    "she is a small nurse.",
    "she is a major nurse.",
    "she is a French nurse.",
    "she is an old nurse.",
    "she is a short nurse.",
    "she is a good nurse.",
    "she was a new nurse.",
    "she was a known nurse.",
    "she was a single nurse.",
    "she was a large nurse.",
    "she was a small nurse.",
    "she was a major nurse.",
    "she was a French nurse.",
    "she was an old nurse.",
    "she was a short nurse.",
    "she was a good nurse.",
]
WANG_THEY = [
    "they is a new nurse.",
    "they is a known nurse.",
    "they is a single nurse.",
    "they is a large nurse.",
    "they is a small nurse.",
    "they is a major nurse.",
    "they is a French nurse.",
    "they is an old nurse.",
    "they is a short nurse.",
    "they is a good nurse.",
    "they was a new nurse.",
    "they was a known nurse.",
    "they was a single nurse.",
    "they was a large nurse.",
    "they was a small nurse.",
    "they was a major nurse.",
    "they was a French nurse.",
    "they was an old nurse.",
    "they was a short nurse.",
    "they was a good nurse.",
]
ADJECTIVES = ["new", "known", "single", "large", "small", "major", "French", "old", "short", "good"]


def _write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


HEADER = """[set]
name = "t"
description = "test set"
source = "test"
year = 2024
license = "MIT"
agreement = {agreement}
"""


def _set_file(tmp_path, templates: str, agreement: str = "true", extra_set: str = "") -> Path:
    return _write(tmp_path, HEADER.format(agreement=agreement) + extra_set + "\n" + templates)


def _one(text: str, extra: str = "") -> str:
    return f'[[template]]\nid = "x"\ntext = "{text}"\n{extra}\n'


# ---------------------------------------------------------------------------------------
# the paper's set
# ---------------------------------------------------------------------------------------


def test_wang2021_generates_exactly_the_20_paper_sentences_per_pronoun():
    s = load_template_set("wang2021")
    assert len(s) == 20
    for pronoun, expected in (("he", WANG_HE), ("she", WANG_SHE), ("they", WANG_THEY)):
        got = [s.render(t, pronoun, "nurse") for t in s.templates]
        assert got == expected


def test_wang2021_they_is_for_all_templates_and_article_ignores_the_task():
    df = render_sentences("wang2021", "he,she,they", ["accountant", "nurse"])
    assert len(df) == 20 * 3 * 2
    they = df[df["attribute"] == "they"]["sentence"].tolist()
    assert sum(x.startswith("they is ") for x in they) == 20  # 10 templates x 2 tasks
    assert sum(x.startswith("they was ") for x in they) == 20
    assert not any("they are" in x or "they were" in x for x in df["sentence"])
    # the article agrees with the adjective, never with the occupation
    assert "he is a new accountant." in set(df["sentence"])
    assert "she was an old accountant." in set(df["sentence"])


def test_wang2021_prompts_match_the_paper_code():
    t2a = build_prompts("wang2021", "he,she,they", "winobias32", direction="T->A")
    a2t = build_prompts("wang2021", "he,she,they", "winobias32", direction="A->T")
    assert t2a.shape == (20 * 32, 6) and a2t.shape == (20 * 3, 6)
    # T->A masks the pronoun only: "***mask*** is a new janitor."
    assert t2a.loc[0, "prompt"] == "[BLANK] is a new janitor."
    assert t2a.loc[0, "candidates"] == ("he", "she", "they")
    assert t2a.loc[32 * 7 + 31, "prompt"] == "[BLANK] is an old sewer."
    # A->T masks the occupation, the pronoun keeps "they is"
    assert a2t.loc[2, "prompt"] == "they is a new [BLANK]."
    assert a2t.loc[2, "candidates"] == tuple(load_tasks("winobias32").words)
    assert a2t.loc[3 * 17 + 1, "prompt"] == "she was an old [BLANK]."


def test_adjectives_set_has_agreement_and_masks_the_verb():
    s = load_template_set("adjectives")
    assert len(s) == 20 and s.agreement and s.article == "sound"
    assert [s.render(t, "they", "nurse") for t in s.templates][:1] == ["They are a new nurse."]
    assert s.render("past-08-old", "they", "nurse") == "They were an old nurse."
    assert s.render("present-07-french", "she", "nurse") == "She is a French nurse."
    # same adjectives in the same order as the paper's set
    assert [t.id.split("-")[-1] for t in s.templates] == [a.lower() for a in ADJECTIVES] * 2
    df = build_prompts(s, ["he", "she", "they"], ["nurse"], direction="task_to_attribute")
    assert df["prompt"].tolist()[:2] == ["[BLANK] a new nurse.", "[BLANK] a known nurse."]
    assert df.loc[0, "candidates"] == ("He is", "She is", "They are")
    assert df.loc[10, "candidates"] == ("He was", "She was", "They were")
    assert df.loc[17, "prompt"] == "[BLANK] an old nurse."
    # candidate order follows the attributes argument
    df2 = build_prompts(s, "they,he", ["nurse"], direction="T->A")
    assert df2.loc[0, "candidates"] == ("They are", "He is")


def test_lu2019_sets():
    s = load_template_set("lu2019")
    ext = load_template_set("lu2019-extended")
    assert len(s) == 40 and len(ext) == 102
    assert [t.tense for t in s.templates] == ["present"] * 20 + ["past"] * 20
    assert [t.text for t in ext.templates[:40]] == [t.text for t in s.templates]
    assert {t.family for t in ext.templates[40:]} == {"wang2021-extra"}
    assert [t.tense for t in ext.templates[40:]] == ["present"] * 31 + ["past"] * 31
    assert s.render("past-01-hungry", "she", "nurse") == "The nurse ate because she was hungry."
    assert s.render("past-01-hungry", "they", "nurse") == "The nurse ate because they were hungry."
    assert (
        s.render("present-01-hungry", "he", "cook") == "The cook is eating because he was hungry."
    )
    assert (
        ext.render("past-extra-31-vain", "they", "baker")
        == "The baker used lots of mirrors because they were vain."
    )
    t2a = build_prompts(s, "he,she,they", ["cook"], direction="T->A")
    assert t2a.loc[20, "prompt"] == "The cook ate because [BLANK] hungry."
    assert t2a.loc[20, "candidates"] == ("he was", "she was", "they were")
    a2t = build_prompts(s, "he,she", ["cook", "nurse"], direction="A->T")
    assert a2t.loc[41, "prompt"] == "The [BLANK] ate because she was hungry."
    assert a2t.loc[41, "candidates"] == ("cook", "nurse")
    assert s.provenance["transcribed"] is True
    assert s.select(tense="past").ids == s.ids[20:]
    with pytest.raises(BiasampError, match=r"no template of set 'lu2019' has family='x'"):
        s.select(family="x")


def test_adjectives_large_generated_from_the_word_list():
    s = load_template_set("adjectives-large")
    lines = (TEMPLATES / "english-adjectives.txt").read_text().splitlines()
    assert len(lines) == 1347
    distinct = list(dict.fromkeys(lines))
    assert len(distinct) == 1339 == len(s)
    assert s.provenance["dropped_duplicates"] == [
        "adorable",
        "dismal",
        "distant",
        "downright",
        "dreary",
        "oblong",
        "precious",
        "tremendous",
    ]
    # the first occurrence is kept: its id carries its 1-based line number
    first = lines.index("oblong") + 1
    assert f"present-{first:04d}-oblong" in s.ids
    assert [t.id.split("-", 2)[2] for t in s.templates] == distinct
    assert (
        s.render(f"present-{lines.index('honest') + 1:04d}-honest", "they", "cook")
        == "They are an honest cook."
    )
    assert (
        s.render(f"present-{lines.index('unique') + 1:04d}-unique", "he", "cook")
        == "He is a unique cook."
    )
    assert (
        s.render(f"present-{lines.index('unimportant') + 1:04d}-unimportant", "he", "cook")
        == "He is an unimportant cook."
    )
    words_sha = hashlib.sha256((TEMPLATES / "english-adjectives.txt").read_bytes()).hexdigest()
    assert s.provenance["words_files"] == {"english-adjectives.txt": words_sha}
    assert words_sha == "92432c11dde3b2a6db12642012d2ecf42156f51234a88cff69b1e779bd98078d"


def test_every_shipped_set_loads_with_provenance():
    names = list_template_sets()
    assert names == [
        "adjectives",
        "adjectives-large",
        "groups",
        "lu2019",
        "lu2019-extended",
        "wang2021",
        "winobias",
        "winogender",
    ]
    counts = {
        "adjectives": 20,
        "adjectives-large": 1339,
        "groups": 22,
        "lu2019": 40,
        "lu2019-extended": 102,
        "wang2021": 20,
        "winobias": 1606,
        "winogender": 120,
    }
    for name in names:
        s = load_template_set(name)
        assert s.name == name and len(s) == counts[name]
        assert s.sha256 == hashlib.sha256(s.path.read_bytes()).hexdigest()
        for key in ("source", "year", "license", "sha256", "file"):
            assert s.provenance[key]
        assert len(set(s.ids)) == len(s)
        # loading by path gives the same set
        assert load_template_set(str(s.path)).ids == s.ids


# ---------------------------------------------------------------------------------------
# a / an
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "word, sound, compat",
    [
        ("new", "a", "a"),
        ("old", "an", "an"),
        ("French", "a", "a"),
        ("Old", "an", "a"),
        ("Each", "an", "a"),
        ("elderly", "an", "an"),
        ("hour", "an", "a"),
        ("honest", "an", "a"),
        ("honorable", "an", "a"),
        ("hourly", "an", "a"),
        ("university", "a", "an"),
        ("unique", "a", "an"),
        ("uniform", "a", "an"),
        ("unimportant", "an", "an"),
        ("unhappy", "an", "an"),
        ("utter", "an", "an"),
        ("urban", "an", "an"),
        ("useful", "a", "an"),
        ("European", "a", "a"),
        ("euphoric", "a", "an"),
        ("one-way", "a", "an"),
        ("one", "a", "an"),
        ("MBA", "an", "a"),
        ("RN", "an", "a"),
        ("mba", "a", "a"),
        ("X-ray", "an", "a"),
        ("8-year-old", "a", "a"),
        ("umbrella", "an", "an"),
        ("house", "a", "a"),
        ("old,", "an", "an"),
    ],
)
def test_article_for_both_rules(word, sound, compat):
    assert article_for(word, "sound") == sound
    assert article_for(word, "wang2021") == compat


def test_article_follows_the_next_word_in_a_custom_set(tmp_path):
    p = _set_file(
        tmp_path,
        _one("{A} {task} met {attribute}.", 'mask = { attribute_to_task = ["a", "task"] }')
        + '[[template]]\nid = "y"\ntext = "{Attribute} {be} {a} {task}\'s friend."\n'
        'mask = { attribute_to_task = ["a", "task"] }\n',
    )
    s = load_template_set(p)
    assert s.render("x", "he", "engineer") == "An engineer met he."
    assert s.render("x", "he", "hour-long guest") == "An hour-long guest met he."
    # article masked together with the task: candidates carry their own article
    df = build_prompts(s, "he,she", ["engineer", "nurse"], direction="A->T")
    assert df.loc[2, "prompt"] == "He is [BLANK]'s friend."
    assert df.loc[2, "candidates"] == ("an engineer", "a nurse")
    assert df.loc[0, "prompt"] == "[BLANK] met he."
    assert df.loc[0, "candidates"] == ("An engineer", "A nurse")


# ---------------------------------------------------------------------------------------
# prompts against a naive implementation
# ---------------------------------------------------------------------------------------

NAIVE_FORMS = {
    "attribute": {"he": "he", "she": "she", "they": "they"},
    "attribute_possessive": {"he": "his", "she": "her", "they": "their"},
    "attribute_noun": {"he": "man", "she": "woman", "they": "person"},
}


def _naive_article(next_word: str, rule: str) -> str:
    w = next_word.strip(".,")
    if rule == "wang2021":
        return "an" if w[0] in "aeiou" else "a"
    low = w.lower()
    if low.startswith(("hour", "honest", "honor")):
        return "an"
    if low.startswith(("uni", "use", "uti", "usa", "eu")) and not low.startswith(("unim", "unin")):
        return "a"
    return "an" if low[0] in "aeiou" else "a"


def _naive_render(text: str, attribute: str, task: str, agreement: bool, rule: str) -> str:
    """Fill slots by plain string replacement, then articles by a regex on the next word."""
    for slot, forms in NAIVE_FORMS.items():
        text = text.replace("{" + slot + "}", forms[attribute])
        text = text.replace("{" + slot.capitalize() + "}", forms[attribute].capitalize())
    plural = agreement and attribute == "they"
    text = text.replace("{be}", "are" if plural else "is").replace(
        "{was}", "were" if plural else "was"
    )
    text = text.replace("{task}", task)
    while "{a}" in text or "{A}" in text:
        m = re.search(r"\{([aA])\} (\S+)", text)
        art = _naive_article(m.group(2), rule)
        text = (
            text[: m.start()]
            + (art.capitalize() if m.group(1) == "A" else art)
            + " "
            + text[m.start() + 4 :]
        )
    return text


@pytest.mark.parametrize(
    "name", ["wang2021", "adjectives", "lu2019", "lu2019-extended", "adjectives-large"]
)
def test_build_prompts_matches_naive_rendering(name):
    s = load_template_set(name)
    attrs = ["he", "she", "they"]
    tasks = load_tasks("winobias40").words if name != "adjectives-large" else ["engineer", "CEO"]
    raw = tomllib.loads(s.path.read_text())
    set_mask = raw["set"]["mask"]
    for direction in ("task_to_attribute", "attribute_to_task"):
        df = build_prompts(s, attrs, tasks, direction=direction)
        outer = tasks if direction == "task_to_attribute" else attrs
        assert len(df) == len(s) * len(outer)
        assert list(df.columns) == [
            "template_id",
            "direction",
            "attribute",
            "task",
            "prompt",
            "candidates",
        ]
        assert (df["direction"] == direction).all()
        assert df["template_id"].tolist() == [i for i in s.ids for _ in outer]
        k = 0
        for t in s.templates:
            masked = t.mask[direction]
            assert list(masked) == set_mask[direction] or t.id.startswith("past")
            tokens = [
                m.group(0)
                for m in re.finditer(r"\{\w+\}", t.text)
                if m.group(0)[1:-1].lower() in masked
            ]
            lo = t.text.index(tokens[0])
            hi = t.text.index(tokens[-1]) + len(tokens[-1])
            span_raw, outside = t.text[lo:hi], t.text[:lo] + "@@" + t.text[hi:]
            for o in outer:
                row = df.iloc[k]
                k += 1
                if direction == "task_to_attribute":
                    assert row["attribute"] is None and row["task"] == o
                    pairs = [(a, o) for a in attrs]
                else:
                    assert row["task"] is None and row["attribute"] == o
                    pairs = [(o, w) for w in tasks]
                a0, w0 = pairs[0]
                prompt = _naive_render(outside, a0, w0, s.agreement, s.article).replace("@@", BLANK)
                assert row["prompt"] == prompt
                assert row["prompt"].count(BLANK) == 1
                cands = tuple(
                    _naive_render(span_raw, a, w, s.agreement, s.article) for a, w in pairs
                )
                assert row["candidates"] == cands
                # invariant: filling the blank with a candidate gives the full sentence
                for (a, w), c in zip(pairs, cands):
                    assert (
                        row["prompt"].replace(BLANK, c)
                        == s.render(t, a, w)
                        == _naive_render(t.text, a, w, s.agreement, s.article)
                    )
        assert k == len(df)


def test_build_prompts_dtypes_aliases_and_inputs():
    vocab = load_tasks("winobias32")
    a = build_prompts("adjectives", "he,she", vocab, direction="A->T")
    b = build_prompts(
        load_template_set("adjectives"), ["he", "she"], vocab.words, direction="attribute_to_task"
    )
    c = build_prompts("adjectives", "he,she", "winobias32", direction="attribute_to_task")
    pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_frame_equal(a, c)
    assert a["task"].dtype == object and a["task"].isna().all()
    assert all(x is None for x in a["task"])
    t = build_prompts("adjectives", "he,she", vocab, direction="T->A")
    assert all(x is None for x in t["attribute"])
    assert all(isinstance(x, tuple) and len(x) == 2 for x in t["candidates"])
    assert all(isinstance(x, tuple) and len(x) == 32 for x in a["candidates"])
    assert canonical_direction("A->T") == "attribute_to_task"


# ---------------------------------------------------------------------------------------
# attributes and directions
# ---------------------------------------------------------------------------------------


def test_resolve_attributes():
    assert resolve_attributes("he,she") == ["he", "she"]
    assert resolve_attributes(" they , he ") == ["they", "he"]
    assert resolve_attributes(("he", "she", "they")) == ["he", "she", "they"]


@pytest.mark.parametrize(
    "spec, pattern",
    [
        ("He,she", r"attributes must be a subset of .*got 'He' \(did you mean 'he'\?\)"),
        ("he,she,it", r"attributes must be a subset of .*got 'it'"),
        ("he,he", r"attributes must not repeat a name; got 'he,he'"),
        ("he", r"attributes must name at least two attributes; got 'he'"),
        ("", r"attributes must be a subset of .*got ''"),
        (["he", 3], r"attributes must be a subset of .*got 3"),
        (5, r"attributes must be a comma-separated string or a list; got 5"),
    ],
)
def test_resolve_attributes_errors(spec, pattern):
    with pytest.raises(BiasampError, match=pattern):
        resolve_attributes(spec)


def test_direction_and_render_errors():
    with pytest.raises(BiasampError, match=r"direction must be one of .*got 'T>A'"):
        build_prompts("wang2021", "he,she", ["nurse"], direction="T>A")
    s = load_template_set("wang2021")
    with pytest.raises(BiasampError, match=r"attribute must be one of .*got 'it'"):
        s.render("present-01-new", "it", "nurse")
    with pytest.raises(
        UnknownNameError, match=r"unknown template id in set 'wang2021' 'present-1-new'"
    ):
        s.template("present-1-new")


# ---------------------------------------------------------------------------------------
# task vocabularies
# ---------------------------------------------------------------------------------------


def _csv_column(path: Path, column: str, delimiter: str = ",") -> list[str]:
    with open(path, newline="") as f:
        return [row[column] for row in csv.DictReader(f, delimiter=delimiter)]


def test_shipped_task_vocabularies():
    assert list_task_sets() == ["winobias32", "winobias40", "winogender60"]
    v32 = load_tasks("winobias32")
    assert v32.words == _csv_column(TASKS / "labor_2016_winobias32.csv", "occupation")
    assert v32.words[:3] == ["janitor", "cook", "mover"] and v32.words[-1] == "sewer"
    assert [v32.groups[w] for w in v32.words] == ["male_biased"] * 16 + ["female_biased"] * 16
    assert v32.sha256 == "d3bae07e2c6b9266558846301da5f41a57c40ed30bb7e6b1a3a41a644c2aed34"
    v40 = load_tasks("winobias40")
    assert v40.words == _csv_column(TASKS / "winobias40_pct_female.csv", "occupation")
    assert len(v40) == 40 and v40.words[0] == "supervisor" and "CEO" in v40.words
    assert [v40.groups[w] for w in v40.words] == ["male_biased"] * 20 + ["female_biased"] * 20
    v60 = load_tasks("winogender60")
    assert v60.words == _csv_column(TASKS / "winogender_occupations_stats.tsv", "occupation", "\t")
    assert len(v60) == 60 and v60.groups == {}
    assert v40.sha256 == "3ee796761c0fa13a3a018bca663f909a878e531528b1cc9cc497e4afe2d74df7"
    assert v60.sha256 == "3f7f37c16381a70571356982ea7fe613ac700ad04a6d3b19b9f2be18248df567"
    assert (
        v60.words[:3] == ["technician", "accountant", "supervisor"] and v60.words[-1] == "secretary"
    )
    for v in (v32, v40, v60):
        assert v.sha256 == hashlib.sha256(v.path.read_bytes()).hexdigest()
        for key in ("source", "year", "license"):
            assert v.provenance[key]


def test_user_task_files(tmp_path):
    p = _write(
        tmp_path, "task,group,pct\nnurse,female_biased,90\ncook,,38\nCEO,male_biased,\n", "mine.csv"
    )
    v = load_tasks(str(p))
    assert v.name == "mine" and v.words == ["nurse", "cook", "CEO"]
    assert v.groups == {"nurse": "female_biased", "CEO": "male_biased"}
    p = _write(tmp_path, "\ufeffoccupation\tx\n pilot \t1\nchef\t2\n", "occ.tsv")
    assert load_tasks(p).words == ["pilot", "chef"]
    p = _write(tmp_path, "# my list\npilot\n\nchef\n", "w.txt")
    assert load_tasks(p).words == ["pilot", "chef"]
    assert build_prompts("wang2021", "he,she", p, direction="A->T").loc[0, "candidates"] == (
        "pilot",
        "chef",
    )


@pytest.mark.parametrize(
    "name, text, pattern",
    [
        ("e.txt", "# nothing\n\n", r"task file '[^']*/e\.txt': the vocabulary is empty"),
        ("d.txt", "nurse\ncook\nnurse\n", r"duplicate word 'nurse' \(entries 1 and 3\)"),
        (
            "c.csv",
            "job,group\nnurse,\n",
            r"needs a 'task' or 'occupation' column; columns are \['job', 'group'\]",
        ),
        ("g.csv", "task,group\nnurse,female\n", r"row 2: group must be one of .*got 'female'"),
        (
            "r.csv",
            "task,group\nnurse,female_biased,extra\n",
            r"row 2 has 3 fields, the header has 2",
        ),
        ("h.csv", "\n\n", r"the file is empty \(a header row is required\)"),
        ("b.csv", "task\n \n", r"task file '[^']*/b\.csv': the vocabulary is empty"),
        ("x.txt", "nurse\n{task}\n", r"entry 2 '\{task\}' contains a brace"),
    ],
)
def test_task_file_errors(tmp_path, name, text, pattern):
    p = _write(tmp_path, text, name)
    with pytest.raises(BiasampError, match=pattern):
        load_tasks(p)


def test_inline_tasks_allow_one_trailing_comma_and_refuse_other_empty_words():
    assert load_tasks("nurse,").words == ["nurse"]  # the documented single-word form
    assert load_tasks(" nurse , cook ,").words == ["nurse", "cook"]
    for spec, entry in (("nurse,,cook", 2), (",nurse", 1), ("nurse,cook,,", 3)):
        with pytest.raises(
            BiasampError,
            match=rf"^tasks {re.escape(repr(spec))}: entry "
            rf"{entry} is empty$",
        ):
            load_tasks(spec)


def test_an_invisible_character_in_a_task_word_is_refused(tmp_path):
    """As in a template word: a zero-width space (or another format character) in a task,
    inline or in a file, is one line naming the entry, the character and its position."""
    zw = (
        r"holds an invisible character \(U\+200B ZERO WIDTH SPACE, at position 4\) in 'coo\\u200bk'"
    )
    with pytest.raises(BiasampError, match=rf"^tasks 'nurse,coo\\u200bk': entry 2 {zw}; remove"):
        load_tasks("nurse,coo\u200bk")
    p = _write(tmp_path, "nurse\ncoo\u200bk\n", "t.txt")
    with pytest.raises(BiasampError, match=rf"t\.txt'\)?: entry 2 {zw}"):
        load_tasks(p)
    with pytest.raises(
        BiasampError, match=r"entry 1 holds an invisible character \(U\+2060 WORD JOINER"
    ):
        load_tasks(["\u2060nurse", "cook"])


def test_task_name_and_path_errors(tmp_path):
    # biasamp.tasks.load_tasks: a BiasampError that also says how to give words inline
    with pytest.raises(
        BiasampError,
        match=r"tasks: unknown task vocabulary 'winobias23' \(did "
        r"you mean 'winobias32'\?\); give a name "
        r"\(winobias32, winobias40, winogender60\)",
    ):
        load_tasks("winobias23")
    with pytest.raises(BiasampError, match=r"tasks: task vocabulary file not found: '.*nope.csv'"):
        load_tasks(str(tmp_path / "nope.csv"))
    with pytest.raises(
        BiasampError, match=r"tasks must be a task vocabulary name or a file path; got ''"
    ):
        load_tasks("")
    (tmp_path / "bad.txt").write_bytes(b"nurse\n\xff\xfe\n")
    with pytest.raises(BiasampError, match=r"not UTF-8"):
        load_tasks(tmp_path / "bad.txt")
    with pytest.raises(BiasampError, match=r"tasks: entry 2 must be a string; got 1"):
        build_prompts("wang2021", "he,she", ["nurse", 1], direction="A->T")
    with pytest.raises(BiasampError, match=r"tasks: the vocabulary is empty"):
        build_prompts("wang2021", "he,she", [], direction="A->T")
    with pytest.raises(BiasampError, match=r"tasks: duplicate word 'cook'"):
        build_prompts("wang2021", "he,she", ["cook", "cook"], direction="A->T")
    with pytest.raises(
        BiasampError,
        match=r"tasks must be a vocabulary name, a file path, "
        r"comma-separated words or a list of words; got 7",
    ):
        build_prompts("wang2021", "he,she", 7, direction="A->T")


def test_task_toml_errors(tmp_path):
    (tmp_path / "w.csv").write_text("occupation,grp\nnurse,female_biased\n")
    base = (
        '[vocabulary]\nname = "v"\ndescription = "d"\nfile = "{file}"\nword_column = '
        '"occupation"\nsource = "s"\nyear = 2020\nlicense = "MIT"\n'
    )
    ok = _write(tmp_path, base.format(file="w.csv") + 'group_column = "grp"\n', "v.toml")
    v = load_tasks(ok)
    assert v.words == ["nurse"] and v.groups == {"nurse": "female_biased"}
    assert v.provenance["metadata_sha256"] == hashlib.sha256(ok.read_bytes()).hexdigest()
    p = _write(tmp_path, base.format(file="missing.csv"), "m.toml")
    with pytest.raises(BiasampError, match=r"data file not found: '.*missing.csv'"):
        load_tasks(p)
    p = _write(tmp_path, base.format(file="w.csv").replace('license = "MIT"\n', ""), "k.toml")
    with pytest.raises(
        BiasampError, match=r"\[vocabulary\]: missing required key\(s\) \['license'\]"
    ):
        load_tasks(p)
    p = _write(tmp_path, base.format(file="w.csv").replace("2020", '"2020"'), "y.toml")
    with pytest.raises(BiasampError, match=r"\[vocabulary\]: year must be an integer; got '2020'"):
        load_tasks(p)
    p = _write(tmp_path, base.format(file="w.csv") + 'group_column = "g"\n', "g.toml")
    with pytest.raises(
        BiasampError, match=r"column 'g' not found; columns are \['occupation', 'grp'\]"
    ):
        load_tasks(p)


# ---------------------------------------------------------------------------------------
# template-file errors
# ---------------------------------------------------------------------------------------


def test_template_set_name_and_path_errors(tmp_path):
    with pytest.raises(
        UnknownNameError,
        match=r"unknown template set 'wang2020' \(did you mean "
        r"'wang2021'\?\); available: adjectives, ",
    ):
        load_template_set("wang2020")
    with pytest.raises(BiasampError, match=r"template_set: template set file not found"):
        load_template_set(str(tmp_path / "x.toml"))
    with pytest.raises(BiasampError, match=r"malformed template set file .*s.toml"):
        load_template_set(_write(tmp_path, "[set\nname = 1\n"))


@pytest.mark.parametrize(
    "templates, agreement, extra_set, pattern",
    [
        # structure of the file
        ("", "true", "", r"the set has no templates"),
        ('[template]\nid = "x"\n', "true", "", r"'template' must be an array of tables"),
        ("[other]\nx = 1\n", "true", "", r"unknown key\(s\) \['other'\]"),
        (
            _one("{attribute} {be} {task}."),
            '"yes"',
            "",
            r"agreement must be true or false; got 'yes'",
        ),
        (
            _one("{attribute} {be} {task}."),
            "true",
            'article = "vowel"\n',
            r"article must be one of .*got 'vowel'",
        ),
        (
            _one("{attribute} {be} {task}."),
            "true",
            "agrement = true\n",
            r"unknown key\(s\) \['agrement'\] \(did you mean 'agreement'\?\)",
        ),
        (
            '[[template]]\ntext = "{attribute} {task}"\n',
            "true",
            "",
            r"template #1: missing required key\(s\) \['id'\]",
        ),
        (
            '[[template]]\nid = "x"\ntext = "{attribute} {task}"\ntense = ""\n',
            "true",
            "",
            r"template 'x': tense must be a non-empty string; got ''",
        ),
        (
            '[[template]]\nid = "x y"\ntext = "{attribute} {task}"\n',
            "true",
            "",
            r"id must be letters, digits, '-', '_' or '.'; got 'x y'",
        ),
        (
            _one("{attribute} {task}.") + _one("{attribute} {task}!"),
            "true",
            "",
            r"duplicate template id 'x'",
        ),
        # slots
        (
            _one("{attribute} {be} {profession}."),
            "true",
            "",
            r"unknown slot \{profession\}.*known slots: \{a\}, \{attribute\}",
        ),
        (
            _one("{atribute} {be} {task}."),
            "true",
            "",
            r"unknown slot \{atribute\} \(did you mean 'attribute'\?\)",
        ),
        (
            _one("{ATTRIBUTE} {task}."),
            "true",
            "",
            r"slot \{ATTRIBUTE\} may only capitalise its first",
        ),
        (_one("{attribute} {be} {task."), "true", "", r"unbalanced brace"),
        (_one("{attribute} } {task}"), "true", "", r"unbalanced brace"),
        (_one("{attribute} is [BLANK] {task}"), "true", "", r"text must not contain '\[BLANK\]'"),
        (
            _one("{attribute} {be} a nurse."),
            "true",
            "",
            r"must contain the \{task\} slot exactly once; got 0",
        ),
        (_one("{task} and {task} met {attribute}."), "true", "", r"exactly once; got 2"),
        (_one("The {task} is here."), "true", "", r"must contain an attribute slot"),
        (
            _one("The {task} {be} a {attribute_noun}."),
            "true",
            "",
            r"the verb slots \{be\}/\{was\} agree with the pronoun and need an \{attribute\} slot",
        ),
        (_one("{attribute} {be} {a}"), "true", "", r"must contain the \{task\} slot"),
        (
            _one("{task}: {attribute} {be} {a}"),
            "true",
            "",
            r"the article slot \{a\} must be followed by a word",
        ),
        # masks
        (
            _one(
                "{attribute} {be} {a} new {task}.", 'mask = { task_to_attribute = ["attribute"] }'
            ),
            "true",
            "",
            r"mask.task_to_attribute must cover every slot that depends on the attribute, "
            r"else the prompt leaks the answer; missing \['be'\]",
        ),
        (
            _one("{attribute} {be} {a} {task}."),
            "true",
            "",
            r"the article \{a\} directly precedes the masked slot \{task\} for attribute_to_task",
        ),
        (
            _one("The {task} is {a} {attribute_noun}."),
            "true",
            "",
            r"the article \{a\} directly precedes the masked slot \{attribute_noun\} for task_to_attribute",
        ),
        (
            _one(
                "{attribute} {be} {task}.",
                'mask = { task_to_attribute = ["attribute", "be", "task"] }',
            ),
            "true",
            "",
            r"mask.task_to_attribute must not contain 'task'",
        ),
        (
            _one("{attribute} {be} new {task}.", 'mask = { attribute_to_task = ["be"] }'),
            "false",
            "",
            r"mask.attribute_to_task must contain 'task'",
        ),
        (
            _one("{attribute} {be} {task}.", 'mask = { attribute_to_task = ["be", "task"] }'),
            "true",
            "",
            r"mask.attribute_to_task must not cover attribute slots \['be'\]",
        ),
        (
            _one("{attribute} met the {task} and {attribute_possessive} friend."),
            "false",
            "",
            r"is not contiguous: slot \{task\} lies inside",
        ),
        (
            _one("{attribute} {be} {task}.", 'mask = { task_to_attribute = ["pronoun"] }'),
            "true",
            "",
            r"mask.task_to_attribute names unknown slot 'pronoun'",
        ),
        (
            _one(
                "{attribute} {be} {task}.",
                'mask = { task_to_attribute = ["attribute", "attribute"] }',
            ),
            "false",
            "",
            r"mask.task_to_attribute repeats a slot",
        ),
        (
            _one("{attribute} {be} {task}.", 'mask = { task_to_attribute = ["attribute", "was"] }'),
            "true",
            "",
            r"slot 'was' must occur exactly once in the text; it occurs 0 times",
        ),
        (
            _one("{attribute} {be} {task}.", 'mask = { T2A = ["attribute"] }'),
            "true",
            "",
            r"mask key must be one of .*got 'T2A'",
        ),
        (
            _one("{attribute} {be} {task}.", "mask = { task_to_attribute = [] }"),
            "true",
            "",
            r"mask.task_to_attribute must be a non-empty list of slot names; got \[\]",
        ),
        (
            _one("{attribute} {be} {task}.", 'mask = "attribute"'),
            "true",
            "",
            r"mask must be a table with keys",
        ),
        (
            _one("{attribute} {be} {task}."),
            "true",
            '\n[set.mask]\ntask_to_attribute = ["attribute"]\n',
            r"missing \['be'\]",
        ),
    ],
)
def test_template_file_errors(tmp_path, templates, agreement, extra_set, pattern):
    p = _set_file(tmp_path, templates, agreement, extra_set)
    with pytest.raises(BiasampError, match=pattern):
        load_template_set(p)


@pytest.mark.parametrize(
    "old, new, pattern",
    [
        ("year = 2024", 'year = "2024"', r"\[set\]: year must be an integer; got '2024'"),
        ("year = 2024", "year = true", r"\[set\]: year must be an integer; got True"),
        (
            'description = "test set"',
            "description = 3",
            r"\[set\]: description must be a non-empty string; got 3",
        ),
        ('license = "MIT"', 'license = ""', r"\[set\]: license must be a non-empty string; got ''"),
    ],
)
def test_set_metadata_errors(tmp_path, old, new, pattern):
    p = _set_file(tmp_path, _one("{attribute} {be} {task}."))
    p.write_text(p.read_text().replace(old, new))
    with pytest.raises(BiasampError, match=pattern):
        load_template_set(p)


def test_default_mask_inference_and_compat_without_agreement(tmp_path):
    p = _set_file(
        tmp_path,
        _one("{Attribute} said {attribute_possessive} friend was a {task}."),
        agreement="false",
    )
    s = load_template_set(p)
    assert dict(s.templates[0].mask) == {
        "task_to_attribute": ("attribute", "attribute_possessive"),
        "attribute_to_task": ("task",),
    }
    df = build_prompts(s, "he,she,they", ["cook"], direction="T->A")
    assert df.loc[0, "prompt"] == "[BLANK] friend was a cook."
    assert df.loc[0, "candidates"] == ("He said his", "She said her", "They said their")
    # without agreement the verb does not depend on the attribute and stays visible
    p = _set_file(tmp_path, _one("{attribute} {be} the {task}."), agreement="false")
    df = build_prompts(p, "he,they", ["cook"], direction="T->A")
    assert df.loc[0, "prompt"] == "[BLANK] is the cook." and df.loc[0, "candidates"] == (
        "he",
        "they",
    )
    p = _set_file(tmp_path, _one("{attribute} {be} the {task}."), agreement="true")
    df = build_prompts(p, "he,they", ["cook"], direction="T->A")
    assert df.loc[0, "prompt"] == "[BLANK] the cook." and df.loc[0, "candidates"] == (
        "he is",
        "they are",
    )


GEN = """[[generate]]
id_prefix = "g-"
text = "{text}"
{extra}
"""


@pytest.mark.parametrize(
    "extra, text, pattern",
    [
        (
            'words = ["new", "old"]\nwords_file = "w.txt"',
            "{Attribute} {be} {a} {word} {task}.",
            r"give exactly one of 'words' \(a list\) or 'words_file'",
        ),
        (
            'words = ["new", "new"]',
            "{Attribute} {be} {a} {word} {task}.",
            r"duplicate word 'new' \(entries 1 and 2\); set duplicates = \"drop\"",
        ),
        (
            'words = ["new"]\nduplicates = "keep"',
            "{Attribute} {be} {a} {word} {task}.",
            r"duplicates must be one of .*got 'keep'",
        ),
        (
            'words = ["new"]',
            "{Attribute} {be} {a} new {task}.",
            r"must contain the \{word\} placeholder",
        ),
        ("words = []", "{Attribute} {be} {a} {word} {task}.", r"the word list is empty"),
        ('words = ["a{b"]', "{Attribute} {be} {a} {word} {task}.", r"word 'a\{b' contains a brace"),
        ('words_file = "nope.txt"', "{Attribute} {be} {a} {word} {task}.", r"words_file not found"),
        (
            'words = ["new"]\ncolour = "x"',
            "{Attribute} {be} {a} {word} {task}.",
            r"\[\[generate\]\] #1: unknown key\(s\) \['colour'\]",
        ),
    ],
)
def test_generator_errors(tmp_path, extra, text, pattern):
    p = _set_file(tmp_path, GEN.format(text=text, extra=extra))
    with pytest.raises(BiasampError, match=pattern):
        load_template_set(p)


def test_generator_with_inline_words_and_drop(tmp_path):
    (tmp_path / "w.txt").write_text("new\n# comment\nold\nnew\nhonest\n")
    p = _set_file(
        tmp_path,
        GEN.format(
            text="{Attribute} {be} {a} {word} {task}.",
            extra='words_file = "w.txt"\nduplicates = "drop"\ntense = "present"',
        ),
    )
    s = load_template_set(p)
    assert s.ids == ["g-0001-new", "g-0002-old", "g-0004-honest"]
    assert [s.render(t, "they", "cook") for t in s.templates] == [
        "They are a new cook.",
        "They are an old cook.",
        "They are an honest cook.",
    ]
    assert s.provenance["dropped_duplicates"] == ["new"]


# ---------------------------------------------------------------------------------------
# data provenance
# ---------------------------------------------------------------------------------------


def test_every_data_file_is_documented_with_its_hash():
    readme = (TEMPLATES / "README.md").read_text()
    files = sorted(p for p in TEMPLATES.rglob("*") if p.is_file() and p.name != "README.md")
    assert (
        len(files) >= 9
    )  # 5 set files + english-adjectives.txt + 3 vocabulary TOMLs (data in base_rates/)
    for p in files:
        rel = p.relative_to(TEMPLATES).as_posix()
        assert rel in readme, rel
        if p.suffix != ".toml":  # data copies: hash in the README must match the bytes
            assert hashlib.sha256(p.read_bytes()).hexdigest() in readme, rel


def test_an_invisible_character_in_a_template_is_refused(tmp_path):
    """A zero-width space in a template word (pasted from a web page) would reach the tokenizer
    as pieces nobody sees: one line naming the character and where it is."""
    p = _set_file(tmp_path, _one("{attribute} {be} a ne\u200bw {task}."))
    with pytest.raises(
        BiasampError,
        match=r"holds an invisible character \(U\+200B ZERO WIDTH SPACE, at position 22\)",
    ):
        load_template_set(p)
