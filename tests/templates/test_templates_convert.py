"""The benchmark converters on the repository's copies of the published files
(``tests/data/winogender``, ``tests/data/winobias``): they reproduce the shipped sets byte
for byte, lose no sentence, and the sets render the benchmarks' own sentences."""

from __future__ import annotations

import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from biasamp import BiasampError
from biasamp._files import data_dir
from biasamp.cli import main
from biasamp.templates import convert_winobias, convert_winogender, load_template_set

DATA = Path(__file__).resolve().parents[1] / "data"
WG, WB = DATA / "winogender", DATA / "winobias"


@pytest.fixture(scope="module")
def winogender():
    return convert_winogender(WG)


@pytest.fixture(scope="module")
def winobias():
    return convert_winobias(WB)


# ---------------------------------------------------------------------------------------
# Winogender
# ---------------------------------------------------------------------------------------


def test_winogender_reproduces_the_shipped_set(winogender):
    assert (
        winogender.text.encode("utf-8") == (data_dir("templates") / "winogender.toml").read_bytes()
    )
    assert winogender.losses == []
    assert winogender.files == {
        "templates.tsv": "496f2e2dc77296bcebcdd8865a8dc5715ce22b772de9abb5f531d5b3114c48a0"
    }


def test_winogender_counts(winogender):
    c = winogender.counts
    assert c["templates"] == 120 and c["occupations"] == 60
    assert c["occupations_by_number_of_templates"] == {"2": 60}
    # every pronoun case of the source: 89 $NOM + 4 $ACC + 27 $POSS = 120 (one per template)
    assert c["pronoun_cases"] == {"nominative": 89, "accusative": 4, "possessive_determiner": 27}
    assert c["agreeing_verbs"] == {"was|were": 17}
    assert c["groups"] == {"referent-occupation": 60, "referent-participant": 60}
    s = load_template_set("winogender")
    per = Counter(t.tasks[0] for t in s.templates)
    assert set(per.values()) == {2} and len(per) == 60
    assert list(s.tasks) == list(per)  # order of first appearance = the 60-word vocabulary's
    from biasamp.tasks import load_tasks

    assert list(s.tasks) == load_tasks("winogender60").words
    names = Counter(n for t in s.templates for n in t.slot_names())
    assert (names["attribute"], names["attribute_accusative"], names["attribute_possessive"]) == (
        89,
        4,
        27,
    )


def test_winogender_renders_the_published_sentences():
    """The 360 participant sentences of all_sentences.tsv, exactly, for he/she/they."""
    s = load_template_set("winogender")
    gender = {"male": "he", "female": "she", "neutral": "they"}
    n = 0
    for line in (WG / "all_sentences.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        sid, sentence = line.split("\t")
        occ, participant, answer, g, _ = sid.split(".")
        if participant == "someone":
            continue
        assert s.render(f"{occ}.{participant}.{answer}", gender[g]) == sentence, sid
        n += 1
    assert n == 360


def test_winogender_errors_and_losses(tmp_path):
    bad = tmp_path / "templates.tsv"
    bad.write_text("a\tb\tc\n", encoding="utf-8")
    with pytest.raises(BiasampError, match=r"winogender: .* does not start with the header"):
        convert_winogender(bad)
    with pytest.raises(BiasampError, match=r"winogender: file not found"):
        convert_winogender(tmp_path / "nope")
    lines = (WG / "templates.tsv").read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3].replace("$POSS_PRONOUN", "$DAT_PRONOUN")
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    conv = convert_winogender(bad)
    assert conv.counts["templates"] == 119
    assert len(conv.losses) == 1 and conv.losses[0].startswith("line 4: not a Winogender template")
    assert "$DAT_PRONOUN" in conv.losses[0]
    bad.write_bytes(b"\xff\xfe")
    with pytest.raises(BiasampError, match=r"is not UTF-8"):
        convert_winogender(bad)


# ---------------------------------------------------------------------------------------
# WinoBias
# ---------------------------------------------------------------------------------------


def test_winobias_reproduces_the_shipped_set(winobias):
    assert winobias.text.encode("utf-8") == (data_dir("templates") / "winobias.toml").read_bytes()
    assert winobias.losses == []
    assert len(winobias.files) == 10  # 8 sentence files + the two occupation lists


def test_winobias_counts(winobias):
    c = winobias.counts
    assert c["sentences"] == {
        "type1-dev": 396,
        "type1-test": 396,
        "type2-dev": 396,
        "type2-test": 396,
    }
    assert c["sentences_total"] == 3168
    # 1,562 pro/anti twins are one template, 22 twins differ: 1,562 + 2 x 22 = 1,606
    assert (c["pro_anti_twins_merged"], c["pro_anti_twins_kept_apart"]) == (1562, 22)
    assert c["templates"] == 1606 == 1562 + 2 * 22
    per = c["templates_per_occupation"]
    assert len(per) == 40 and sum(per.values()) == 1606 and min(per.values()) == 36
    assert (per["mechanic"], per["construction worker"], per["tailor"], per["CEO"]) == (
        41,
        40,
        41,
        36,
    )
    # every case the sentences use, counted over the 3,168 sentences (3,255 brackets)
    assert c["pronoun_cases"] == {
        "nominative": 1467,
        "possessive_determiner": 367,
        "accusative": 1418,
        "reflexive": 3,
    }
    assert sum(c["pronoun_cases"].values()) == 3255
    assert c["her_resolved_by_twin"] + c["her_resolved_by_next_word"] == 891
    assert c["agreeing_verbs"]["was|were"] == 332 and c["agreeing_verbs"]["knows|know"] == 24
    assert c["two_pronoun_templates"] == 46 and c["a_an_referents"] == 2
    assert c["sentences_with_literal_gendered_words"] == 5 and c["spaces_normalised"] == 1
    assert c["groups"] == {
        "type1": 799,
        "type2": 807,
        "pro": 1584,
        "anti": 1584,
        "dev": 804,
        "test": 802,
    }


def _source_sentences():
    """(file, line, gender of the first pronoun, sentence without brackets) of all 3,168."""
    for path in sorted(WB.glob("*_stereotyped_type*.txt.*")):
        for line in path.read_text(encoding="utf-8").splitlines():
            n, text = line.split(" ", 1)
            first = re.search(r"\[(he|she|him|her|his|himself|herself)\]", text, re.I).group(1)
            gender = "he" if first.lower() in ("he", "him", "his", "himself") else "she"
            yield path.name, int(n), gender, " ".join(re.sub(r"[\[\]]", "", text).split())


def test_winobias_renders_every_source_sentence():
    """Each of the 3,168 sentences is its template rendered with its own pronoun's gender."""
    s = load_template_set("winobias")
    n = 0
    for name, line, gender, sentence in _source_sentences():
        kind, t, split = re.match(
            r"(pro|anti)_stereotyped_type(\d)\.txt\.(dev|test)", name
        ).groups()
        tid = f"t{t}-{split}-{line:03d}"
        if tid not in s.ids:
            tid += f"-{kind}"
        tpl = s.template(tid)
        assert kind in tpl.groups and f"type{t}" in tpl.groups and split in tpl.groups
        assert s.render(tpl, gender) == sentence, (name, line)
        n += 1
    assert n == 3168


def test_winobias_two_pronoun_templates_score_each_attribute_in_context():
    s = load_template_set("winobias")
    t = s.template("t1-dev-027")
    assert t.text == (
        "The {task} visited the hairdresser because {attribute} needed to cut "
        "{attribute_possessive} hair."
    )
    assert t.context == "per-attribute" and t.mask["task_to_attribute"] == ("attribute",)
    assert t.tasks == ("developer",) and set(t.groups) == {"type1", "dev", "pro", "anti"}


def test_winobias_errors(tmp_path):
    with pytest.raises(BiasampError, match=r"winobias: path must be the folder"):
        convert_winobias(WB / "male_occupations.txt")
    d = tmp_path / "wb"
    shutil.copytree(WB, d)
    (d / "pro_stereotyped_type2.txt.test").unlink()
    with pytest.raises(BiasampError, match=r"winobias: file not found: .*pro_stereotyped_type2"):
        convert_winobias(d)
    shutil.copy(WB / "pro_stereotyped_type2.txt.test", d)
    anti = d / "anti_stereotyped_type1.txt.dev"
    anti.write_text("\n".join(anti.read_text().splitlines()[:-1]) + "\n")
    with pytest.raises(
        BiasampError,
        match=r"type 1 dev: the pro file has 396 sentences and the "
        r"anti file 395",
    ):
        convert_winobias(d)
    shutil.copy(WB / "anti_stereotyped_type1.txt.dev", d)
    pro = d / "pro_stereotyped_type1.txt.dev"
    lines = pro.read_text().splitlines()
    lines[0] = lines[0].replace("[The developer]", "[The astronaut]")
    pro.write_text("\n".join(lines) + "\n")
    conv = convert_winobias(d)
    assert conv.losses == [
        "pro_stereotyped_type1.txt.dev line 1: referent 'astronaut' is not one of the occupations"
    ]
    assert conv.counts["templates"] == 1606  # the anti twin stays, as its own template
    assert "t1-dev-001-anti" in conv.text


# ---------------------------------------------------------------------------------------
# the command
# ---------------------------------------------------------------------------------------


def test_convert_command(tmp_path, capsys):
    out = tmp_path / "wg.toml"
    assert (
        main(["templates", "convert", "winogender", str(WG / "templates.tsv"), "-o", str(out)]) == 0
    )
    text = capsys.readouterr().out
    assert f"# winogender: wrote {out}" in text
    assert "templates: 120" in text and "lost: 0" in text
    assert "pronoun_cases: nominative 89, accusative 4, possessive_determiner 27" in text
    assert out.read_bytes() == (data_dir("templates") / "winogender.toml").read_bytes()
    assert (
        main(["templates", "convert", "winogender", str(WG), "-o", str(out), "--name", "wg2"]) == 2
    )  # an existing file is not replaced silently
    assert "exists; choose a new file or pass --overwrite" in capsys.readouterr().err
    assert (
        main(
            [
                "templates",
                "convert",
                "winogender",
                str(WG),
                "-o",
                str(out),
                "--name",
                "wg2",
                "--overwrite",
            ]
        )
        == 0
    )
    assert load_template_set(out).name == "wg2"


@pytest.mark.parametrize(
    "args, message",
    [
        (["wino", "x"], "unknown benchmark 'wino' (did you mean 'winobias'?)"),
        (["winobias", "no/such/dir"], "winobias: path must be the folder"),
        (["winogender", "no/such.tsv"], "winogender: file not found"),
    ],
)
def test_convert_command_errors(tmp_path, capsys, args, message):
    assert main(["templates", "convert", *args, "-o", str(tmp_path / "x.toml")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_list_and_show_the_bound_sets(capsys):
    assert main(["templates", "--list"]) == 0
    out = capsys.readouterr().out
    assert "winobias           1606 templates" in out and "winogender          120 templates" in out
    assert "(winobias, winogender: templates bound to their own task" in out
    # show uses the set's own tasks when --tasks is not given
    assert main(["templates", "show", "winogender", "--limit", "2"]) == 0
    out = capsys.readouterr().out
    assert "# winogender: 120 templates x 2 attributes x 60 tasks" in out
    assert (
        "technician.customer.1\tThe technician told the customer that he could pay with cash."
        in out
    )
