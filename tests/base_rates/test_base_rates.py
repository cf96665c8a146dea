"""Tests of biasamp.base_rates (sources, compat constructions, user CSVs, CLI)."""

import numpy as np
import pandas as pd
import pytest

from biasamp import BiasampError, UnknownNameError
from biasamp._files import data_dir
from biasamp.base_rates import (
    COMPAT_SOURCES,
    BaseRateTable,
    MissingEntriesError,
    ZeroRowWarning,
    get_source,
    list_sources,
)
from biasamp.base_rates._table import derive_association
from biasamp.cli import main
from biasamp.tasks import load_tasks

W32 = load_tasks("winobias32").words
#: the WinoBias group of each occupation, read from the shipped table
GROUPS = pd.read_csv(data_dir("base_rates") / "winobias40_pct_female.csv").set_index("occupation")[
    "winobias_group"
]
HSS = ["he", "she"]
HST = ["he", "she", "they"]


def indicator(joint):
    """sign(P(T|A) - P(T)) computed like the paper's utils.py (exact np.sign).

    C order as in the paper: DataFrame.to_numpy() is Fortran-ordered under pandas 3, and
    numpy's row sums of an F-ordered array round differently (the uniform(3) ties flip).
    """
    x = np.ascontiguousarray(np.asarray(joint, dtype=float))
    num_attributes = np.sum(x, axis=0)
    total = np.sum(num_attributes)
    p_t_a = x / np.expand_dims(num_attributes, 0)
    p_t = np.sum(x, axis=1) / total
    return np.sign(p_t_a - p_t[:, None])


def test_vocabulary_is_the_papers_32_in_order():
    assert len(W32) == 32
    assert W32[:3] == ["janitor", "cook", "mover"] and W32[15] == "sheriff"
    assert W32[16] == "cashier" and W32[-1] == "sewer"
    g = GROUPS
    assert [g[t] for t in W32] == ["male_biased"] * 16 + ["female_biased"] * 16


# --------------------------------------------------------------------- uniform-wang2021
def paper_uniform(direction, k):
    """Independent transcription of fit_sentences.py base_source 0 for the 32 (occu_num 16)."""
    occu_num = 16
    if direction == "A->T":
        b = np.zeros((32, 2)) + (1.0 / (2 * occu_num))
        if k == 3:
            b = np.zeros((32, 3)) + (1.0 / 2 * occu_num)  # the precedence slip: 8.0
    else:
        b = np.zeros((32, k)) + (0.5 if k == 2 else 1.0 / 3.0)
    b[:occu_num, 0] += 1e-7
    b[:occu_num, 1] -= 1e-7
    b[occu_num:, 0] -= 1e-7
    b[occu_num:, 1] += 1e-7
    if k == 3:
        b[:occu_num, 2] -= 1e-7
        b[occu_num:, 2] -= 1e-7
    if direction == "A->T":
        b = b / np.sum(b, axis=0, keepdims=True)
    return b


@pytest.mark.parametrize("direction", ["A->T", "T->A"])
@pytest.mark.parametrize("attrs", [HSS, HST])
def test_uniform_wang2021_exact_bits(direction, attrs):
    t = get_source("uniform-wang2021").table(W32, attrs, direction=direction)
    np.testing.assert_array_equal(t.joint.to_numpy(), paper_uniform(direction, len(attrs)))
    assert t.tie_tol == 0.0 and t.association is None
    assert t.direction == ("attribute_to_task" if direction == "A->T" else "task_to_attribute")
    assert list(t.joint.index) == W32 and list(t.joint.columns) == attrs


def test_uniform_wang2021_three_pronoun_they_indicator():
    at = indicator(get_source("uniform-wang2021").table(W32, HST, direction="A->T").joint)
    ta = indicator(get_source("uniform-wang2021").table(W32, HST, direction="T->A").joint)
    # the paper's quirk: floating-point rounding makes 'they' -1 for every occupation in A->T
    assert (at[:, 2] == -1).all()
    assert (ta[:, 2] == 0).all()
    # he/she follow the groups in both directions
    for y in (at, ta):
        assert (y[:16, 0] == 1).all() and (y[:16, 1] == -1).all()
        assert (y[16:, 0] == -1).all() and (y[16:, 1] == 1).all()


def test_uniform_wang2021_a_to_t_three_pronoun_values():
    j = get_source("uniform-wang2021").table(W32, HST, direction="A->T").joint.to_numpy()
    # column 'they' = (8 - 1e-7) / (32 * (8 - 1e-7)) ~ 1/32; he = (8 + 1e-7) / (16*(8+1e-7) + 16*(8-1e-7))
    assert j[0, 2] == pytest.approx(1 / 32, abs=1e-15)
    assert j[0, 0] == pytest.approx((8 + 1e-7) / 256, rel=1e-12)
    np.testing.assert_allclose(j.sum(axis=0), 1.0, rtol=0, atol=1e-15)


def test_uniform_wang2021_attribute_order_and_errors():
    a = get_source("uniform-wang2021").table(W32, ["she", "he"], direction="T->A").joint
    b = get_source("uniform-wang2021").table(W32, HSS, direction="T->A").joint
    np.testing.assert_array_equal(a["she"], b["she"])
    with pytest.raises(BiasampError, match="direction is required for base-rate source"):
        get_source("uniform-wang2021").table(W32, HSS)
    with pytest.raises(BiasampError, match=r"direction must be one of .*got 'T>A'"):
        get_source("uniform-wang2021").table(W32, HSS, direction="T>A")
    with pytest.raises(MissingEntriesError, match=r"attributes \['it'\] not in"):
        get_source("uniform-wang2021").table(W32, ["he", "she", "it"], direction="A->T")
    with pytest.raises(MissingEntriesError, match=r"attributes \['she'\]"):
        get_source("uniform-wang2021").table(W32, ["he", "they"], direction="A->T")
    with pytest.raises(MissingEntriesError, match=r"tasks \['astronaut'\].*WinoBias group"):
        get_source("uniform-wang2021").table(["nurse", "astronaut"], HSS, direction="A->T")


def test_uniform_wang2021_winobias40_uses_groups():
    w40 = load_tasks("winobias40").words  # interleaved order (supervisor, ..., CEO, cashier, ...)
    j = get_source("uniform-wang2021").table(w40, HSS, direction="T->A").joint
    g = GROUPS
    for t in w40:
        assert j.loc[t, "he"] == (0.5 + 1e-7 if g[t] == "male_biased" else 0.5 - 1e-7)


# --------------------------------------------------------------------- uniform
def test_uniform_exact_and_association():
    t = get_source("uniform").table(["nurse", "cook", "tailor"], HST)
    j = t.joint.to_numpy()
    assert (j == 1.0).all()
    p_a_t = j / j.sum(axis=1, keepdims=True)
    assert (p_a_t == 1.0 / 3).all()  # exactly 1/|A|
    p_t = j.sum(axis=1) / j.sum()
    assert (p_t == 1.0 / 3).all()  # exactly 1/|T|
    assert t.association.to_numpy().tolist() == [[-1, 1, 0], [1, -1, 0], [-1, 1, 0]]
    assert t.direction is None and t.tie_tol is None
    same = get_source("uniform:winobias").table(["nurse", "cook", "tailor"], HST)
    assert same.association.equals(t.association) and same.joint.equals(t.joint)
    with pytest.raises(MissingEntriesError, match=r"tasks \['astronaut'\] not in .*uniform:SOURCE"):
        get_source("uniform").table(["nurse", "astronaut"], HSS)
    with pytest.raises(MissingEntriesError, match=r"attributes \['man'\]"):
        get_source("uniform").table(["nurse"], ["he", "man"])


def test_uniform_from_other_source_signs():
    t = get_source("uniform:labor-2016").table(W32, HST)
    lab = get_source("labor-2016").table(W32, HSS).joint
    expected = indicator(lab)
    np.testing.assert_array_equal(t.association[HSS].to_numpy(), expected)
    assert (t.association["they"] == 0).all()
    # salesperson: 3312 x 48% = 1589.76 women; P(T=sales|she) > P(T): she +1
    assert t.association.loc["salesperson"].tolist() == [-1, 1, 0]
    assert (t.joint.to_numpy() == 1).all()
    with pytest.raises(UnknownNameError, match="did you mean 'labor-2016'"):
        get_source("uniform:labor-2061")
    with pytest.raises(BiasampError, match="compat source"):  # where it is named
        get_source("uniform:uniform-wang2021")


# --------------------------------------------------------------------- labor
def test_labor_2016_values():
    t = get_source("labor-2016").table(["nurse", "janitor"], HSS)
    # nurse: 3102 employed, 90% women -> he 3102*(1-0.9) = 310.2, she 3102*0.9 = 2791.8
    assert t.joint.loc["nurse", "he"] == 3102 * (1.0 - (90 / 100.0))
    assert t.joint.loc["nurse", "she"] == pytest.approx(2791.8, abs=1e-9)
    # janitor: 2276 employed, 34% women -> 1502.16 / 773.84
    assert t.joint.loc["janitor"].tolist() == pytest.approx([1502.16, 773.84], abs=1e-9)
    full = get_source("labor-2016").table(W32, HSS).joint
    raw = pd.read_csv("base_rates/labor_2016_winobias32.csv")
    np.testing.assert_allclose(full.sum(axis=1).to_numpy(), raw["employed_thousands"], rtol=1e-12)
    assert list(full.index) == W32


def test_labor_2016_missing_employment_says_why():
    with pytest.raises(MissingEntriesError, match=r"tasks \['supervisor'\].*labor-2016-shares"):
        get_source("labor-2016").table(["nurse", "supervisor"], HSS)
    with pytest.raises(
        MissingEntriesError, match=r"attributes \['they'\] not in .*it has: he, she"
    ):
        get_source("labor-2016").table(["nurse"], HST)


def test_labor_2016_aliases_and_shares():
    t = get_source("labor-2016").table(["tailor", "construction worker"], HSS).joint
    assert t.loc["tailor", "she"] == 79 * (80 / 100.0)
    assert list(t.index) == ["tailor", "construction worker"]
    s = get_source("labor-2016-shares").table(load_tasks("winobias40").words, HSS).joint
    assert s.loc["supervisor"].tolist() == [1 - 0.44, 0.44]
    assert s.shape == (40, 2)


def test_labor_2016_wang2021_directions():
    at = get_source("labor-2016-wang2021").table(W32, HSS, direction="A->T").joint.to_numpy()
    ta = get_source("labor-2016-wang2021").table(W32, HSS, direction="T->A").joint.to_numpy()
    raw = pd.read_csv("base_rates/labor_2016_winobias32.csv")
    nums, pct = raw["employed_thousands"].to_numpy(float), raw["pct_female"].to_numpy(float)
    naive = np.zeros((32, 2))
    for i in range(32):
        naive[i, 0] = nums[i] * (1.0 - (pct[i] / 100.0))
        naive[i, 1] = nums[i] * (pct[i] / 100.0)
    naive = naive / np.sum(naive, axis=0, keepdims=True)
    np.testing.assert_array_equal(at, naive)
    naive_ta = np.zeros((32, 2))
    naive_ta[:, 1] = pct / 100.0
    naive_ta[:, 0] = 1.0 - naive_ta[:, 1]
    np.testing.assert_array_equal(ta, naive_ta)
    i = W32.index("salesperson")
    # A->T (employment-weighted): P(sales|she) = 1589.76/she-total > P(sales) -> [-1, 1]
    assert indicator(at)[i].tolist() == [-1, 1]
    # T->A (unweighted shares, P(T) = 1/32): P(sales|he) = .52/sum(he shares) > 1/32 -> [1, -1]
    assert indicator(ta)[i].tolist() == [1, -1]
    with pytest.raises(BiasampError, match="direction is required"):
        get_source("labor-2016-wang2021").table(W32, HSS)


def test_labor_2022_values_and_missing_rows():
    t = get_source("labor-2022").table(["nurse", "mechanic"], HSS)
    bls = pd.read_csv("base_rates/bls_cpsaat11_2022_clean.csv").set_index("occupation")
    rn = bls.loc["Registered nurses"]
    assert t.joint.loc["nurse", "she"] == rn["total_employed_thousands"] * (rn["pct_women"] / 100.0)
    assert (rn["total_employed_thousands"], rn["pct_women"]) == (3363, 87.9)
    # 'mechanic' (the WinoBias sentences' spelling) is looked up as 'mechanician' through the
    # one task alias table, and the table says so
    assert t.provenance["task_aliases"] == {"mechanic": "mechanician"}
    assert t.provenance["rows"]["mechanician"]["bls_title"].startswith("Automotive service")
    assert list(t.joint.index) == ["nurse", "mechanic"]
    assert t.provenance["no_bls_row"] == [
        "assistant",
        "clerk",
        "counselor",
        "designer",
        "attendant",
    ]
    with pytest.raises(
        MissingEntriesError, match=r"tasks \['counselor', 'designer'\].*mapping 'none'"
    ):
        get_source("labor-2022").table(W32, HSS)


def test_bergsma():
    t = get_source("bergsma").table(["nurse", "engineer"], HSS).joint
    assert t.loc["engineer"].tolist() == [1 - 1.99 / 100, 1.99 / 100]
    assert (t.sum(axis=1) == 1).all()  # shares: P(T) uniform
    with pytest.raises(
        MissingEntriesError,
        match=r"tasks \['cook', 'mover', 'laborer'\] not in .*bergsma.*it has 60",
    ):
        get_source("bergsma").table(W32[:4], HSS)


# --------------------------------------------------------------------- wikipedia
def test_wikipedia_counts_reproducible_from_shipped_text(wikitext_dir):
    from biasamp.corpus import count_text

    text = "".join(
        (wikitext_dir / f"wiki.{s}.tokens").read_text(encoding="utf-8") for s in ("valid", "test")
    )
    for rule, name in (
        ("default", "wikitext103-valtest"),
        ("wang2021", "wikitext103-valtest-wang2021"),
    ):
        expect = count_text(text, W32, rule=rule)
        with pytest.warns(ZeroRowWarning, match="janitor"):
            t = get_source(name).table(W32, HSS, direction="T->A")
        np.testing.assert_array_equal(t.joint.to_numpy(), expect.to_numpy())
        assert t.provenance["vocabulary"] == "winobias32"


def test_wikipedia_compat_a_to_t_and_vocab_choice():
    with pytest.warns(ZeroRowWarning):  # noqa: PT031 - either table may warn: one must
        c = (
            get_source("wikitext103-valtest-wang2021")
            .table(W32, HSS, direction="T->A")
            .joint.to_numpy()
        )
        at = get_source("wikitext103-valtest-wang2021").table(W32, HSS, direction="A->T")
    np.testing.assert_array_equal(at.joint.to_numpy(), c / np.sum(c, axis=0, keepdims=True))
    assert at.tie_tol == 0.0
    g = get_source("wikitext103-valtest").table(["nurse", "engineer"], HSS)
    assert g.provenance["vocabulary"] == "winogender60"
    with pytest.raises(MissingEntriesError, match=r"tasks \['astronaut'\]"):
        get_source("wikitext103-valtest").table(["astronaut"], HSS)


# --------------------------------------------------------------------- user CSV
def write(tmp_path, text, name="t.csv"):
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    return p


def test_file_wide_and_long(tmp_path):
    w = write(tmp_path, "# a comment\ntask,he,she,they\nnurse,1,9,2\ncook,3,1,0\n")
    t = get_source(f"file:{w}").table(["cook", "nurse"], ["she", "he"])
    assert t.joint.to_numpy().tolist() == [[1, 3], [9, 1]]
    assert t.provenance["files"][0]["sha256"]
    lg = write(tmp_path, "task,attribute,probability\nnurse,he,0.1\nnurse,she,0.9\n", "l.csv")
    assert get_source(f"file:{lg}").table(["nurse"], HSS).joint.to_numpy().tolist() == [[0.1, 0.9]]


@pytest.mark.parametrize(
    "text,match",
    [
        ("", "is empty"),
        ("# only a comment\n", "is empty"),
        ("task,he,she\n", "header but no rows"),
        ("name,he,she\nnurse,1,2\n", "needs a 'task' column"),
        ("task\nnurse\n", "needs attribute columns"),
        (
            "task,he,she\nnurse,1,-2\n",
            r"column 'she' must be non-negative; got \[\('nurse', '-2'\)\]",
        ),
        (
            "task,he,she\nnurse,1,lots\n",
            r"column 'she' must be numeric; got \[\('nurse', 'lots'\)\]",
        ),
        ("task,he,she\nnurse,1,\n", "column 'she' must be numeric"),
        ("task,he,she\nnurse,1,inf\n", "column 'she' must be numeric"),
        ("task,he,she\nnurse,1,2\nnurse,3,4\n", r"duplicate task rows: \['nurse'\]"),
        ("task,he,he\nnurse,1,2\n", "duplicate columns"),
        ("task,attribute,count\nnurse,he,1\nnurse,he,2\n", r"duplicate \(task, attribute\) rows"),
        ("task,attribute,count\nnurse,he,1\ncook,she,2\n", r"lacks \(task, attribute\) pairs"),
        ("task,attribute,count,probability\nnurse,he,1,1\n", "exactly the columns"),
        ("task,attribute\nnurse,he\n", "exactly the columns"),
        (
            "# provenance: {bad\ntask,he\nnurse,1\n",
            r"t.csv', line 1 \('# provenance:'\) is not valid JSON: Expecting property name",
        ),
        (
            "#\n\n# provenance: [1, 2]\ntask,he\nnurse,1\n",
            r"t.csv', line 3 \('# provenance:'\) must hold a JSON object .*; got list \[1, 2\]$",
        ),
        ('# provenance: "x"\ntask,he\nnurse,1\n', r"must hold a JSON object .*; got str \"x\"$"),
        (
            '# provenance: {"n_kept": Infinity}\ntask,he\nnurse,1\n',
            r"line 1 \('# provenance:'\): n_kept is Infinity, not a finite number",
        ),
        (
            '# provenance: {"n_kept": -3, "rule": "r"}\ntask,he\nnurse,1\n',
            r"n_kept must be a non-negative integer \(the sentences counted\); got -3$",
        ),
        (
            b"task,he\nna\xefve,1\n",
            r"base-rate CSV file '.*t.csv' is not UTF-8 text: byte 0xef at position 10 \(line 2\)",
        ),
    ],
)
def test_file_malformed(tmp_path, text, match):
    p = write(tmp_path, text)
    with pytest.raises(BiasampError, match=match):
        get_source(f"file:{p}")


def test_file_missing_and_lookup_errors(tmp_path):
    for name in ("file:", "uniform:file:"):  # where the source is named, not at its table
        with pytest.raises(BiasampError, match="base-rate CSV not found"):
            get_source(f"{name}{tmp_path / 'nope.csv'}")
    for name in ("file:", "file:  "):  # no path: not the current folder
        with pytest.raises(
            BiasampError, match=r"^base-rate source 'file:' names no file; give file:PATH"
        ):
            get_source(name)
    for name in ("uniform:file:", " uniform:file: "):  # the signs of no file: refused as early
        with pytest.raises(
            BiasampError,
            match=r"^base-rate source 'uniform:file:' names no file; give uniform:file:PATH",
        ):
            get_source(name)
    p = write(tmp_path, "task,he,she\nnurse,1,2\n")
    with pytest.raises(MissingEntriesError, match=r"tasks \['cook'\] not in .*it has 1: nurse"):
        get_source(f"file:{p}").table(["nurse", "cook"], HSS)


def test_uniform_of_a_file_reads_it_once(tmp_path, monkeypatch):
    from biasamp.base_rates import _file

    reads = []
    real = _file.read_table_csv
    monkeypatch.setattr(_file, "read_table_csv", lambda path: reads.append(path) or real(path))
    p = write(tmp_path, "task,he,she\nnurse,1,2\ncook,3,1\n")
    src = get_source(f"uniform:file:{p}")
    tables = [src.table(["nurse", "cook"], HSS, direction=d) for d in ("A->T", "T->A")]
    assert reads == [p] and all(t.association.loc["nurse"].tolist() == [-1, 1] for t in tables)


def test_registry_and_name_validation():
    assert {
        "uniform",
        "uniform-wang2021",
        "labor-2016",
        "labor-2016-wang2021",
        "labor-2022",
        "bergsma",
        "wikitext103-valtest",
        "wikitext103-valtest-wang2021",
    } <= set(list_sources())
    with pytest.raises(
        UnknownNameError, match=r"unknown base-rate source 'labr-2016' \(did you mean"
    ):
        get_source("labr-2016")
    with pytest.raises(BiasampError, match="must be a non-empty string; got ''"):
        get_source("")
    with pytest.raises(BiasampError, match=r"tasks must be unique; got duplicates \['nurse'\]"):
        get_source("labor-2016").table(["nurse", "nurse"], HSS)
    with pytest.raises(BiasampError, match="attributes must be a non-empty list"):
        get_source("labor-2016").table(["nurse"], [])


def test_every_source_on_the_32(recwarn):
    ok = {
        "uniform": None,
        "uniform:labor-2016": None,
        "labor-2016": None,
        "uniform-wang2021": "A->T",
        "labor-2016-wang2021": "T->A",
        "wikitext103-valtest": None,
        "wikitext103-valtest-wang2021": "A->T",
        "labor-2016-shares": None,
    }
    for name, d in ok.items():
        t = get_source(name).table(W32, HSS, direction=d)
        assert list(t.joint.index) == W32 and list(t.joint.columns) == HSS, name
        assert (t.joint.to_numpy() >= 0).all() and np.isfinite(t.joint.to_numpy()).all(), name
        for key in ("name", "license", "method", "files"):
            assert key in t.provenance, (name, key)


def test_compat_tables_carry_the_papers_metric_settings(recwarn):
    """Every *-wang2021 table: tie_tol 0.0 and undefined "tie"; every other: None, None."""
    compat = COMPAT_SOURCES["wang2021"]
    # "wikipedia" is the paper's row name (its plain source is wikitext103-valtest)
    plain_of = {"wikipedia": "wikitext103-valtest"}
    assert set(compat.values()) <= set(list_sources())
    assert {plain_of.get(k, k) for k in compat} <= set(list_sources())
    for plain, paper in compat.items():
        plain = plain_of.get(plain, plain)
        for d in ("A->T", "T->A"):
            t = get_source(paper).table(W32, HSS, direction=d)
            assert (t.tie_tol, t.undefined) == (0.0, "tie"), paper
            p = get_source(plain).table(W32, HSS, direction=d)
            assert (p.tie_tol, p.undefined) == (None, None), plain
    t = BaseRateTable(pd.DataFrame([[1.0, 1.0]], columns=HSS), None, None, None, {"name": "x"})
    assert t.provenance == {"name": "x"} and t.undefined is None  # keyword-only, after tie_tol
    with pytest.raises(BiasampError, match=r"undefined must be one of 'skip', 'tie'; got 'nan'"):
        BaseRateTable(t.joint, undefined="nan")


def test_zero_rows_warned_once_and_not_logged(caplog):
    with pytest.warns(ZeroRowWarning) as rec:
        get_source("wikitext103-valtest").table(["nurse", "janitor"], HSS)
    assert len(rec) == 1 and "['janitor']" in str(rec[0].message)
    assert rec[0].filename == __file__  # points at the caller
    assert not [r for r in caplog.records if "all-zero row" in r.getMessage()]


def test_direction_aliases_are_the_shared_ones():
    for alias in ("a2t", "AT", "attribute_to_task", " A->T "):
        t = get_source("uniform-wang2021").table(W32, HSS, direction=alias)
        assert t.direction == "attribute_to_task"


def test_derive_association_ties():
    j = pd.DataFrame([[1.0, 1.0], [1.0, 1.0 + 1e-15]], columns=HSS)
    assert derive_association(j).to_numpy().tolist() == [[0, 0], [0, 0]]
    assert derive_association(j, tie_tol=0.0).to_numpy()[1].tolist() == [-1, 1]


# --------------------------------------------------------------------- CLI
def test_cli_base_rates(capsys, tmp_path):
    assert main(["base-rates", "--list"]) == 0
    assert "labor-2016-wang2021" in capsys.readouterr().out
    assert (
        main(
            [
                "base-rates",
                "show",
                "uniform",
                "--tasks",
                "nurse,cook",
                "--attributes",
                "he,she,they",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "sign(they)" in out and "nurse" in out
    assert main(["base-rates", "show", "wikitext103-valtest", "--tasks", "nurse,janitor"]) == 0
    assert "all-zero rows (P(A|T) undefined): janitor" in capsys.readouterr().out
    assert main(["base-rates", "show", "uniform-wang2021"]) == 2
    assert "direction is required" in capsys.readouterr().err
    assert main(["base-rates", "show", "labr-2016"]) == 2
    assert "did you mean 'labor-2016'" in capsys.readouterr().err
    assert main(["base-rates", "show"]) == 2
    assert "needs a SOURCE" in capsys.readouterr().err


def test_show_warns_of_a_table_the_probe_refuses(tmp_path, capsys):
    # all 50/50: every BiasAmp-> against it 0 by construction (the probe refuses it: check_base)
    f = tmp_path / "even.csv"
    f.write_text("task,he,she\nnurse,5,5\ncook,3,3\n")
    assert main(["base-rates", "show", f"file:{f}", "--tasks", "nurse,cook"]) == 0
    out, err = capsys.readouterr()
    assert "nurse" in out and "cook" in out  # the table is still shown
    assert err.count("\n") == 1 and err.startswith(
        f"warning: biasamp probe refuses this table: base_rates: source 'file:{f}': every one "
        "of the requested tasks holds the attributes in their overall proportion"
    )
    assert "BiasAmp-> is 0 by construction" in err
    f.write_text("task,he,she\nnurse,5,6\ncook,3,3\n")  # one task leans: no warning
    assert main(["base-rates", "show", f"file:{f}", "--tasks", "nurse,cook"]) == 0
    assert capsys.readouterr().err == ""


def test_count_sources_keep_their_counts_and_say_what_they_are(recwarn, tmp_path):
    t = get_source("wikitext103-valtest").table(W32, HSS, direction="A->T")
    assert t.provenance["kind"] == "counts" and t.provenance["demonstration"] is True
    assert t.provenance["n_kept"] == 97 and "97 sentences kept" in t.provenance["about"]
    assert t.counts_transform == "column-normalise"
    np.testing.assert_array_equal(t.joint_from_counts(t.counts.to_numpy()), t.joint.to_numpy())
    ta = get_source("wikitext103-valtest").table(W32, HSS, direction="T->A")
    assert ta.counts_transform == "identity" and ta.counts.equals(ta.joint)
    for name, kind in (
        ("labor-2016", "statistics"),
        ("uniform", "constructed"),
        ("labor-2016-shares", "statistics"),
    ):
        t = get_source(name).table(W32, HSS)
        assert t.counts is None and t.provenance["kind"] == kind and t.provenance["about"]
    long = tmp_path / "long.csv"
    long.write_text("task,attribute,count\nnurse,he,1\nnurse,she,9\n")
    t = get_source(f"file:{long}").table(["nurse"], HSS)
    assert t.provenance["kind"] == "counts" and t.counts.to_numpy().tolist() == [[1, 9]]
    assert t.provenance["demonstration"] is True  # 10 sentences
    wide = tmp_path / "wide.csv"
    wide.write_text("task,he,she\nnurse,0.1,0.9\n")
    t = get_source(f"file:{wide}").table(["nurse"], HSS)
    assert t.counts is None and t.provenance["kind"] == "user"
    marked = tmp_path / "marked.csv"
    marked.write_text('# provenance: {"value": "count"}\ntask,he,she\nnurse,1000,10\n')
    t = get_source(f"file:{marked}").table(["nurse"], HSS)
    assert t.provenance["kind"] == "counts" and t.provenance["demonstration"] is False
