"""Tests of biasamp.corpus (counting rules, splitter, pool, CSV round trip, CLI)."""

import io
import itertools
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from biasamp import BiasampError
from biasamp._errors import ZeroRowWarning
from biasamp.base_rates import get_source
from biasamp.cli import main
from biasamp.corpus import (
    DEFAULT_WORD_GROUPS,
    RULES,
    WANG2021_WORD_GROUPS,
    count_cooccurrences,
    count_text,
)
from biasamp.corpus._matching import occupation_forms
from biasamp.corpus._sentences import split_sentences
from biasamp.tasks import load_tasks

W32 = load_tasks("winobias32").words
DEFAULT_GROUPS = DEFAULT_WORD_GROUPS


@pytest.fixture(scope="module")
def wt_valid(wikitext_dir):
    """WikiText-103 valid (tests/data), as a file path."""
    return str(wikitext_dir / "wiki.valid.tokens")


def split_lines(text):
    """Lines as text-mode file iteration gives them (universal newlines, ``\\n`` kept)."""
    return io.StringIO(text, newline=None).readlines()


def _lines(path):
    with open(path, encoding="utf-8") as f:
        return f.readlines()


TEXT = (
    "He is a cook .\n"  # default: cook/he; wang2021: misses 'He'
    "her cookie was good .\n"  # wang2021: cookie counted as cook/she
    " = = The nurse = = \n"  # heading: skipped by both
    "The nurses said she was tired . The baker left .\n"  # default: plural nurse/she
    "the cook and the nurse said he left .\n"  # two occupations: dropped by both
    "the cook , the nurse and the baker saw him .\n"  # wang2021: 3 substrings -> baker, but no 'him' in its groups
    "the cook , the nurse and the baker saw his dog .\n"  # wang2021: 3 -> last (baker)/he; default: dropped
    "the baker saw his daughter .\n"  # both groups: dropped by both
)


def test_wang2021_quirks_and_default_fixes():
    w = count_text(TEXT, ["cook", "nurse", "baker"], rule="wang2021")
    d = count_text(TEXT, ["cook", "nurse", "baker"], rule="default")
    # wang2021: line 2 (cookie -> cook, her -> she), line 4 (substring: nurses -> nurse, she)
    # and line 7 (third match accepted: baker, his)
    assert w.to_numpy().tolist() == [[0, 1], [0, 1], [1, 0]]
    # default: line 1 (He -> he, cook) and line 4 (nurses -> nurse, she)
    assert d.to_numpy().tolist() == [[1, 0], [0, 1], [0, 0]]
    assert list(w.columns) == ["he", "she"] and list(d.index) == ["cook", "nurse", "baker"]


def naive_wang2021(lines, occs, groups):
    """Line-by-line transcription of reference-semantics §4 (read_wiki2.py)."""
    m = np.zeros((len(occs), len(groups)), dtype=int)
    for line in lines:
        if "=" in line:
            continue
        for sent in line.split("."):
            ii = None
            for i, o in enumerate(occs):
                if o in sent:
                    if ii is not None:
                        ii = None
                        continue
                    ii = i
            if ii is None:
                continue
            jj = None
            for j, g in enumerate(groups):
                if len(set(g) & set(sent.split(" "))) > 0:
                    if jj is not None:
                        if j != 2:
                            jj = None
                        continue
                    jj = j
            if jj is None:
                continue
            m[ii][jj] += 1
    return m


def test_wang2021_equals_naive_on_wikitext(wt_valid):
    lines = _lines(wt_valid)
    got = count_text(lines, W32, rule="wang2021").to_numpy()
    np.testing.assert_array_equal(
        got, naive_wang2021(lines, W32, list(WANG2021_WORD_GROUPS.values()))
    )
    assert got.sum() > 10


def test_wang2021_equals_naive_on_long_lines():
    # many pieces on one line (the next newline is searched once per line, not per piece),
    # then short lines: the remembered newline must not leak from one line to the next
    pieces = [
        "the nurse said he was tired",
        "a cook and she",
        "the cook and the nurse he",
        "no one",
        "the writer she",
    ]
    long_line = " . ".join(pieces * 200) + " .\n"
    lines = [long_line, "the nurse he .\n", "the cook . she\n", long_line.rstrip("\n")]
    got = count_text(lines, W32, rule="wang2021").to_numpy()
    np.testing.assert_array_equal(
        got, naive_wang2021(lines, W32, list(WANG2021_WORD_GROUPS.values()))
    )
    # 3 of the 5 pieces count (two occupations reset the choice; "no one" names none), 200
    # times on each of the 2 long lines; then "the nurse he" ("the cook" has no pronoun)
    assert got.sum() == 3 * 200 * 2 + 1


def test_wang2021_third_group_never_resets():
    groups = {"he": ["he"], "she": ["she"], "they": ["they"]}
    text = (
        "the cook and he and they .\nthe cook and he and she .\nthe cook she they .\n"
        "the cook he she they .\n"
    )
    got = count_text(text, ["cook"], rule="wang2021", word_groups=groups).to_numpy()
    naive = naive_wang2021(text.splitlines(keepends=True), ["cook"], list(groups.values()))
    np.testing.assert_array_equal(got, naive)
    # he+they -> he; he+she -> none; she+they -> she; he+she+they -> reset, then they
    assert got.tolist() == [[1, 1, 1]]


def naive_default(lines, occs, groups):
    """Independent default rule: token n-grams against singular/plural sets."""
    m = np.zeros((len(occs), len(groups)), dtype=int)
    for line in lines:
        if not line.strip() or re.match(r"^\s*=.*=\s*$", line):
            continue
        for sent in split_sentences(line):
            toks = re.findall(r"\w+", sent.lower())
            grams = set(toks) | {" ".join(p) for p in itertools.pairwise(toks)}
            found = {i for i, o in enumerate(occs) if grams & set(occupation_forms(o))}
            gs = {j for j, g in enumerate(groups) if grams & set(g)}
            if len(found) == 1 and len(gs) == 1:
                m[found.pop(), gs.pop()] += 1
    return m


def test_default_equals_naive_on_wikitext(wt_valid):
    lines = _lines(wt_valid)
    groups = {
        "he": ["he", "him", "his", "himself", "man", "boy", "son"],
        "she": ["she", "her", "hers", "herself", "woman", "girl", "daughter"],
    }
    occs = W32 + ["construction worker", "police officer"]
    got = count_text(lines, occs, rule="default", word_groups=groups).to_numpy()
    np.testing.assert_array_equal(got, naive_default(lines, occs, list(groups.values())))
    assert got.sum() > 10


def test_default_forms_and_multiword():
    text = (
        "The construction workers saw herself .\nTwo salespeople met him .\n"
        "The HAIRDRESSER said hers .\nA worker saw her .\n"
    )
    d = count_text(text, ["construction worker", "salesperson", "hairdresser"])
    assert d.to_numpy().tolist() == [[0, 1], [1, 0], [0, 1]]
    assert count_text(text, ["salesperson"], plurals=False).to_numpy().tolist() == [[0, 0]]
    assert occupation_forms("secretary") == ["secretary", "secretaries"]
    assert occupation_forms("coach") == ["coach", "coaches"]
    assert occupation_forms("chairman") == ["chairman", "chairmen"]


def test_split_sentences():
    assert split_sentences("It rained . Then it stopped !  Why ? ok") == [
        "It rained .",
        "Then it stopped !",
        "Why ? ok",
    ]
    assert split_sentences("Mr. Smith and Dr. Jones met Mrs. Doe in St. Louis.") == [
        "Mr. Smith and Dr. Jones met Mrs. Doe in St. Louis."
    ]
    assert split_sentences('He won in 1990. The end "came" . 3 left.') == [
        "He won in 1990.",
        'The end "came" .',
        "3 left.",
    ]
    assert split_sentences("It is 1 @.@ 5 m long .") == ["It is 1 @.@ 5 m long ."]
    assert split_sentences("   ") == []


@pytest.mark.filterwarnings("ignore::biasamp._errors.ZeroRowWarning")
def test_pool_equals_single_process_and_counts(wt_valid, tmp_path):
    a = count_cooccurrences(wt_valid, W32, n_jobs=1)
    b = count_cooccurrences([wt_valid], W32, n_jobs=2, chunk_chars=50_000)
    np.testing.assert_array_equal(a.counts.to_numpy(), b.counts.to_numpy())
    assert (a.n_lines, a.n_sentences, a.n_kept) == (b.n_lines, b.n_sentences, b.n_kept)
    assert a.n_lines == 3760 and a.n_kept == a.counts.to_numpy().sum()
    w = count_cooccurrences(wt_valid, W32, rule="wang2021", n_jobs=2, chunk_chars=100_000)
    lines = _lines(wt_valid)
    # pieces scanned = sum over lines without '=' of (number of '.' + 1)
    assert w.n_sentences == sum(line.count(".") + 1 for line in lines if "=" not in line)
    assert w.provenance["corpus"]["files"][0]["sha256"].startswith("9aee9f52")
    assert w.provenance["rule"] == "wang2021" and w.provenance["n_kept"] == w.n_kept


def test_csv_round_trip(wt_valid, tmp_path):
    with pytest.warns(ZeroRowWarning, match=r"2 task\(s\) never counted: \['nurse', 'sewer'\]"):
        r = count_cooccurrences(
            wt_valid, ["nurse", "writer", "sewer"], n_jobs=1, corpus_name="wt-valid"
        )
    p = r.to_csv(tmp_path / "c.csv")
    with pytest.warns(ZeroRowWarning, match=r"\['nurse'\]"):
        t = get_source(f"file:{p}").table(["writer", "nurse"], ["she", "he"])
    np.testing.assert_array_equal(
        t.joint.to_numpy(), r.counts.loc[["writer", "nurse"], ["she", "he"]].to_numpy()
    )
    assert t.provenance["file_provenance"]["corpus"]["name"] == "wt-valid"
    assert r.zero_rows == [t for t in r.counts.index if r.counts.loc[t].sum() == 0]
    assert "sewer" in r.zero_rows and "writer" not in r.zero_rows


def test_tasks_never_counted_warn_once_and_are_not_logged(wt_valid, caplog):
    with pytest.warns(ZeroRowWarning) as caught:
        r = count_cooccurrences(wt_valid, ["writer", "sewer", "astronaut"], n_jobs=1)
    assert [str(w.message) for w in caught] == ["2 task(s) never counted: ['sewer', 'astronaut']"]
    assert r.zero_rows == ["sewer", "astronaut"]
    assert not [rec for rec in caplog.records if "never counted" in rec.getMessage()]


@pytest.mark.filterwarnings("ignore::biasamp._errors.ZeroRowWarning")
def test_datasets_object_equals_files(wt_valid):
    import datasets

    lines = _lines(wt_valid)[:800]
    ds = datasets.Dataset.from_dict({"text": lines})
    a = count_cooccurrences(ds, W32, n_jobs=1)
    np.testing.assert_array_equal(a.counts.to_numpy(), count_text(lines, W32).to_numpy())
    assert a.provenance["corpus"]["kind"] == "datasets-object" and a.n_lines == 800
    with pytest.raises(BiasampError, match="text_column 'body' not in the dataset's columns"):
        count_cooccurrences(ds, W32, n_jobs=1, text_column="body")


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"rule": "paper"}, r"rule must be one of .*got 'paper'"),
        ({"tasks": []}, r"tasks must not be empty"),
        ({"tasks": "nurse"}, r"tasks must be a list of occupation names, not a string"),
        ({"tasks": ["nurse", "nurse"]}, r"tasks must be unique; got duplicates \['nurse'\]"),
        ({"word_groups": {}}, "word_groups must be a non-empty mapping"),
        ({"word_groups": {"he": []}}, r"word_groups\['he'\] must be a non-empty list"),
        ({"word_groups": {"he": "he"}}, r"word_groups\['he'\] must be a non-empty list"),
        ({"n_jobs": 0}, "n_jobs must be a positive int"),
        ({"chunk_chars": 0}, "chunk_chars must be a positive int"),
        ({"corpus": "no/such/file.txt"}, r"corpus file\(s\) not found"),
        ({"corpus": []}, "corpus must name at least one file"),
    ],
)
def test_errors(wt_valid, kwargs, match):
    args = {"corpus": wt_valid, "tasks": ["nurse"]}
    args.update(kwargs)
    with pytest.raises(BiasampError, match=match):
        count_cooccurrences(args.pop("corpus"), args.pop("tasks"), **args)


def test_cli_count(wt_valid, tmp_path, capsys):
    out = tmp_path / "c.csv"
    with warnings.catch_warnings():  # the zero-row tasks are in the summary line instead
        warnings.simplefilter("error", ZeroRowWarning)
        assert (
            main(
                [
                    "count",
                    wt_valid,
                    "--tasks",
                    "nurse,writer",
                    "--rule",
                    "wang2021",
                    "--jobs",
                    "1",
                    "-o",
                    str(out),
                ]
            )
            == 0
        )
    printed = capsys.readouterr().out
    assert "sentences counted" in printed and "1 task(s) with no count: nurse" in printed
    out.unlink()
    assert (
        main(
            [
                "-q",
                "count",
                wt_valid,
                "--tasks",
                "nurse,writer",
                "--rule",
                "wang2021",
                "--jobs",
                "1",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    assert capsys.readouterr() == ("", "") and out.is_file()  # -q: only errors
    with pytest.warns(ZeroRowWarning):
        t = get_source(f"file:{out}").table(["nurse", "writer"], ["he", "she"]).joint
    ref = count_text("".join(_lines(wt_valid)), ["nurse", "writer"], rule="wang2021")
    np.testing.assert_array_equal(t.to_numpy(), ref.to_numpy())
    assert main(["count", "--tasks", "nurse", "-o", str(out)]) == 2
    assert "give either FILES or --dataset" in capsys.readouterr().err
    assert main(["count", wt_valid, "--tasks", "nurse", "--groups", "he", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--groups must look like 'he=he,him;she=she,her' or name an attribute set (" in err
    assert err.endswith("got 'he'\n") and err.count("\n") == 1
    # options that would count nothing or count twice (issue 29): one line, exit 2
    for argv, message in (
        (["--groups=he=he,him"], "--groups must name at least 2 groups"),
        ([wt_valid], "is given twice (its sentences would be counted twice)"),
        ([str(Path(wt_valid).parent / "*")], "is given twice"),  # the glob matches it again
        ([str(out.parent / "*")], "is also a corpus file"),  # the glob catches --out
    ):
        argv = ["count", wt_valid, *argv, "--tasks", "nurse,writer", "-o", str(out), "--overwrite"]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err
    assert (
        main(
            [
                "-q",
                "count",
                wt_valid,
                "--tasks",
                "nurse,",
                "--jobs",
                "1",
                "--groups",
                "m=he,him;f=she,her",
                "-o",
                str(out),
            ]
        )
        == 2
    )  # a counts CSV is not replaced
    assert "exists; choose a new file or pass --overwrite" in capsys.readouterr().err
    assert (
        main(
            [
                "-q",
                "count",
                wt_valid,
                "--tasks",
                "nurse,",
                "--jobs",
                "1",
                "--groups",
                "m=he,him;f=she,her",
                "-o",
                str(out),
                "--overwrite",
            ]
        )
        == 0
    )
    assert out.read_text().splitlines()[1] == "task,m,f"


def test_cli_count_tasks_go_through_load_tasks(wt_valid, tmp_path, capsys):
    """--tasks takes what biasamp.tasks.load_tasks takes; an unknown name is an error."""
    out = tmp_path / "c.csv"
    assert main(["count", wt_valid, "--tasks", "nosuchvocab", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "unknown task vocabulary 'nosuchvocab'" in err and not out.exists()
    assert main(["count", wt_valid, "--tasks", "winobias23", "-o", str(out)]) == 2
    assert "(did you mean 'winobias32'?)" in capsys.readouterr().err
    words = tmp_path / "jobs.txt"
    words.write_text("writer\nnurse\n", encoding="utf-8")
    for spec in (f"@{words}", str(words), "writer,nurse"):
        assert (
            main(
                [
                    "-q",
                    "count",
                    wt_valid,
                    "--tasks",
                    spec,
                    "--jobs",
                    "1",
                    "-o",
                    str(out),
                    "--overwrite",
                ]
            )
            == 0
        )
        assert [line.split(",")[0] for line in out.read_text().splitlines()[2:]] == [
            "writer",
            "nurse",
        ]
    assert (
        main(
            [
                "-q",
                "count",
                wt_valid,
                "--tasks",
                "winobias32",
                "--jobs",
                "1",
                "-o",
                str(out),
                "--overwrite",
            ]
        )
        == 0
    )
    assert len(out.read_text().splitlines()) == 2 + 32
    capsys.readouterr()


TOKENS = [
    "the",
    "The",
    "cook",
    "cookie",
    "Cook",
    "COOK",
    "nurse",
    "nurses",
    "CEO",
    "ceos",
    "baker",
    "construction",
    "worker",
    "workers",
    "he",
    "He",
    "she",
    "her",
    "hers",
    "him",
    "his",
    "they",
    ".",
    ".",
    ".",
    "!",
    "?",
    "=",
    "Mr.",
    "J.",
    "U.S.",
    '"',
    "(",
    ")",
    "1990.",
    "café",
    "naïve",
    "İstanbul",
    "cooK",
    "salespeople",
    "salesperson",
    ",",
    "@.@",
    "e.g.",
    "Dr.",
    "nurse.",
    ".cook",
    "\t",
    "  ",
]


ENGINE_TOKENS = TOKENS + [
    "\r",
    "\r\n",
    "\n",
    "\u00a0",
    "\u2028",
    "\u212a",
    "\x1c",
    "”",
    "“Yes",
    "No.",
    "etc.",
    "i.e.",
    "A.",
    "é.",
    "x_.",
    "Dr!",
    ". (He",
    ". [It",
]


def random_corpus(seed: int) -> bytes:
    """Seeded random text over tricky tokens; every third one has undecodable bytes."""
    rng = np.random.default_rng(seed)
    text = "".join(
        rng.choice(ENGINE_TOKENS) + rng.choice([" ", "", " ", "\n", "  "])
        for _ in range(rng.integers(1, 600))
    )
    raw = text.encode("utf-8")
    if seed % 3 == 0:
        raw = raw.replace(b"e", b"\xe9", 2).replace(b"o", b"\xc3", 1).replace(b"a", b"\x80", 1)
    return raw


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("matcher", ["hyperscan", "numpy"])
@pytest.mark.parametrize("rule", ["wang2021", "default"])
def test_engine_equals_plain_path_on_random_bytes(seed, matcher, rule):
    """count_bytes (numpy + scanner) == the line-by-line reference on text-mode lines."""
    raw = random_corpus(seed)
    lines = split_lines(raw.decode("utf-8", "replace"))
    # + occupations with a "." or a line break: never inside a wang2021 piece, whole lines
    # for the default rule
    tasks = [
        "cook",
        "nurse",
        "CEO",
        "baker",
        "construction worker",
        "salesperson",
        "he",
        ".cook",
        "nurse.",
        "e\n",
    ]
    groups = {"he": ["he", "him", "his"], "she": ["she", "her", "hers"], "they": ["they"]}
    c = RULES.get(rule)(tasks, groups, matcher=matcher)
    got, ref = c.count_bytes(raw), c.count(lines, fast=False)
    np.testing.assert_array_equal(got[0], ref[0])
    assert got[1:] == ref[1:]
    assert ref[0].sum() > 0 and ref[1] == len(lines)
    # a list of lines that joins exactly goes through the engine too
    np.testing.assert_array_equal(c.count(lines)[0], ref[0])
    if rule == "wang2021":
        # the plain path itself equals the naive transcription of the paper's script
        np.testing.assert_array_equal(ref[0], naive_wang2021(lines, tasks, list(groups.values())))


@pytest.mark.parametrize("matcher", ["hyperscan", "numpy"])
@pytest.mark.parametrize("rule", ["wang2021", "default"])
def test_engine_equals_plain_path_on_wikitext(wikitext_dir, matcher, rule):
    occs = W32 + ["construction worker", "police officer"]
    for split in ("valid", "test"):
        raw = (wikitext_dir / f"wiki.{split}.tokens").read_bytes()
        c = RULES.get(rule)(occs, dict(RULES.get(rule).default_groups), matcher=matcher)
        got, ref = c.count_bytes(raw), c.count(split_lines(raw.decode("utf-8")), fast=False)
        np.testing.assert_array_equal(got[0], ref[0])
        assert got[1:] == ref[1:] and ref[3] > 20


def test_non_ascii_forms_and_lowercase_expanding_characters():
    """Forms or text where lower() is not an ASCII byte map take the lower-cased text path."""
    text = (
        "The CAFÉ OWNER saw her .\nThe \u212aEEPER saw him .\nİ the cook said he .\n"
        "the café owners met his son .\n"
    )
    tasks = ["café owner", "keeper", "cook"]
    lines = split_lines(text)
    for matcher in ("hyperscan", "numpy"):
        c = RULES.get("default")(tasks, dict(DEFAULT_GROUPS), matcher=matcher)
        got, ref = c.count_bytes(text.encode()), c.count(lines, fast=False)
        np.testing.assert_array_equal(got[0], ref[0])
        assert ref[0].tolist() == [[1, 1], [1, 0], [1, 0]]


def test_record_with_inner_newline_uses_plain_path():
    lines = ["the cook said he\nleft . she\n", "her cookie .", "the nurse saw him .\n"]
    for rule in ("wang2021", "default"):
        c = RULES.get(rule)(["cook", "nurse"], {"he": ["he", "him"], "she": ["she", "her"]})
        fast, plain = c.count(lines), c.count(lines, fast=False)
        np.testing.assert_array_equal(fast[0], plain[0])
        assert fast[1:] == plain[1:]
    # wang2021 treats each record as one line: 'he\nleft ' is not the word 'he'
    assert count_text(lines, ["cook", "nurse"], rule="wang2021").to_numpy().tolist() == [
        [0, 1],
        [0, 0],
    ]


def test_byte_ranges_match_text_mode_reading(tmp_path):
    p = tmp_path / "mixed.txt"
    body = (
        "The cook said he left .\r\nher cookie .\rThe nurse said she was tired . "
        "The baker , café owner , saw his son .\n" * 40 + "the cook and he"
    )
    p.write_bytes(body.encode("utf-8"))
    with open(p, encoding="utf-8") as f:  # text mode: universal newlines
        lines = f.readlines()
    for rule in ("wang2021", "default"):
        ref = count_text(lines, ["cook", "nurse", "baker"], rule=rule).to_numpy()
        for jobs, chunk in ((1, 37), (2, 101), (1, 10_000)):
            r = count_cooccurrences(
                p, ["cook", "nurse", "baker"], rule=rule, n_jobs=jobs, chunk_chars=chunk
            )
            np.testing.assert_array_equal(r.counts.to_numpy(), ref)
            assert r.n_lines == len(lines) == 121


@pytest.mark.filterwarnings("ignore::biasamp._errors.ZeroRowWarning")
def test_hf_prefix_streams_a_local_datasets_folder(wt_valid, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    lines = _lines(wt_valid)[:600]
    (tmp_path / "part.txt").write_text("".join(lines), encoding="utf-8")
    r = count_cooccurrences(f"hf:{tmp_path}", W32, rule="wang2021", n_jobs=2, chunk_chars=20_000)
    # the 'text' builder drops the line breaks; a record is read as text ending with one, so
    # the dataset counts as the file it was made from (wang2021 sees "he\n", not "he")
    f = count_cooccurrences(tmp_path / "part.txt", W32, rule="wang2021", n_jobs=1)
    assert (r.counts.to_numpy().tolist(), r.n_lines, r.n_sentences, r.n_kept) == (
        f.counts.to_numpy().tolist(),
        f.n_lines,
        f.n_sentences,
        f.n_kept,
    )
    assert r.n_lines == 600 and r.provenance["corpus"]["kind"] == "datasets"
    assert r.provenance["corpus"]["split"] == "train" and r.provenance["corpus"]["streaming"]


def test_uniform_with_file_signs(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("task,he,she\nnurse,1,9\ncook,6,4\n")
    t = get_source(f"uniform:file:{p}").table(["nurse", "cook"], ["he", "she", "they"])
    # P(T=nurse|he) = 1/7 < P(nurse) = 10/20 -> he -1; P(nurse|she) = 9/13 > 1/2 -> she +1
    assert t.association.to_numpy().tolist() == [[-1, 1, 0], [1, -1, 0]]


def test_count_text_splits_like_a_text_mode_file(tmp_path):
    text = "the cook said he\u2028left .\r\nher cookie\x0c .\rthe nurse saw his son .\n"
    p = tmp_path / "u.txt"
    p.write_bytes(text.encode("utf-8"))
    with open(p, encoding="utf-8") as f:
        lines = f.readlines()
    assert len(lines) == 3  # only \n, \r\n and \r end lines (not \u2028 or \x0c)
    for rule in ("wang2021", "default"):
        np.testing.assert_array_equal(
            count_text(text, ["cook", "nurse"], rule=rule).to_numpy(),
            count_text(lines, ["cook", "nurse"], rule=rule).to_numpy(),
        )
    np.testing.assert_array_equal(
        count_text(text, ["cook", "nurse"], rule="wang2021").to_numpy(),
        naive_wang2021(lines, ["cook", "nurse"], list(WANG2021_WORD_GROUPS.values())),
    )


def test_vectorised_boundary_gaps_equal_regex(wt_valid):
    from biasamp.corpus._rule_base import Buffer
    from biasamp.corpus._sentences import BOUNDARY_NL, boundary_gaps

    def same_gaps(text):
        """boundary_gaps == the byte offsets of the regex's group 1 over the text as read."""
        text = "".join(split_lines(text))
        byte_at = np.cumsum([0] + [len(c.encode("utf-8")) for c in text])
        spans = [m.span(1) for m in BOUNDARY_NL.finditer(text)]
        want = [
            [int(byte_at[k]) for k in ends]
            for ends in ([s for s, _ in spans], [e for _, e in spans])
        ]
        return [a.tolist() for a in boundary_gaps(Buffer(text.encode("utf-8")))] == want

    assert same_gaps("".join(_lines(wt_valid)))
    extra = TOKENS + [
        '"The',
        "“Yes",
        "”",
        "’",
        "\u00a0",
        "\u2028",
        "Mr.",
        "etc.",
        "A.",
        "?!",
        "...",
        '."',
        "'s",
        ".)",
        "(He",
        "[It",
        "1.5",
        "\x0c",
        "\r",
        ".\t",
        "Ünal",
    ]
    for seed in range(200):
        rng = np.random.default_rng(seed)
        s = "".join(
            rng.choice(extra) + rng.choice([" ", "", " ", "\n", "  "])
            for _ in range(rng.integers(1, 60))
        )
        assert same_gaps(s), s
