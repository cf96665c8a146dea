"""Corpus formats, inputs and early errors of biasamp.corpus (local engine)."""

import bz2
import errno
import gzip
import json
import lzma
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from biasamp import BiasampError
from biasamp._errors import ZeroRowWarning
from biasamp.cli import main
from biasamp.corpus import count_cooccurrences, count_text
from biasamp.corpus._formats import strip_wikitext
from biasamp.tasks import load_tasks

W32 = load_tasks("winobias32").words
DUMP = Path(__file__).parents[1] / "data" / "wikipedia" / "mini-pages-articles.xml"
# what the dump's articles are, once their markup is stripped (see tests/data/README.md)
DUMP_ARTICLES = [
    (
        "Ada Nurse was a nurse in London. She trained many nurses.\n\n== Early life ==\n"
        "Her father was a cook . He baked bread every day.\n\n=== Career ===\n"
        "The doctor said she was the best nurse of her time. The cook and the nurse met him ."
    ),
    (
        "Bob (born 1901) was a carpenter from Leeds. His son became a carpenter too.\n"
        " He built a school.\n The school's cook was his daughter .\n\n"
        "Bob the carpenter said he was proud."
    ),
]


def quiet_count(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ZeroRowWarning)
        return count_cooccurrences(*args, **kwargs)


def summary(r):
    return r.counts.to_numpy().tolist(), r.n_lines, r.n_sentences, r.n_kept


@pytest.fixture(scope="module")
def same_text(tmp_path_factory, wikitext_dir):
    """WikiText-103 valid as .txt, .gz, .bz2, .xz, .zst, .jsonl, .jsonl.gz and .parquet."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    import zstandard

    d = tmp_path_factory.mktemp("formats")
    raw = (wikitext_dir / "wiki.valid.tokens").read_bytes()
    lines = raw.decode("utf-8").split("\n")[:-1]  # records: lines without their "\n"
    jsonl = "".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(lines))
    files = {
        "a.txt": raw,
        "a.txt.gz": gzip.compress(raw),
        "a.txt.bz2": bz2.compress(raw),
        "a.txt.xz": lzma.compress(raw),
        "a.txt.zst": zstandard.compress(raw),
        "a.jsonl": jsonl.encode(),
        "a.jsonl.gz": gzip.compress(jsonl.encode()),
    }
    for name, data in files.items():
        (d / name).write_bytes(data)
    pq.write_table(
        pa.table({"id": list(range(len(lines))), "text": lines}),
        d / "a.parquet",
        row_group_size=700,
    )
    return d


FORMAT_FILES = [
    "a.txt.gz",
    "a.txt.bz2",
    "a.txt.xz",
    "a.txt.zst",
    "a.jsonl",
    "a.jsonl.gz",
    "a.parquet",
]


@pytest.mark.parametrize("rule", ["wang2021", "default"])
def test_same_text_counts_the_same_in_every_format(same_text, rule):
    ref = quiet_count(same_text / "a.txt", W32, rule=rule, n_jobs=1)
    assert ref.n_lines == 3760 and ref.n_kept > 20
    for name in FORMAT_FILES:
        for jobs, shard in ((1, None), (2, 150_000)):
            r = quiet_count(same_text / name, W32, rule=rule, n_jobs=jobs, chunk_chars=shard)
            assert summary(r) == summary(ref), (name, jobs)
    files = quiet_count(same_text / "a.parquet", W32, rule=rule, n_jobs=1).provenance
    entry = files["corpus"]["files"][0]
    assert (
        entry["format"] == "parquet" and entry["bytes"] == (same_text / "a.parquet").stat().st_size
    )
    assert files["corpus"]["text_column"] == "text" and len(entry["sha256"]) == 64


def test_byte_range_shards_cut_the_file_into_whole_lines_once(wikitext_dir):
    from biasamp.corpus._inputs import resolve_inputs
    from biasamp.corpus._shards import ReadOptions, make_shards, shard_chunks

    path = wikitext_dir / "wiki.valid.tokens"
    data = path.read_bytes()
    longest = max(len(line) for line in data.splitlines(keepends=True))
    opts = ReadOptions(chunk_bytes=5000)
    for shard_bytes in (37, 50_000, 400_000):
        shards = make_shards(resolve_inputs(str(path)), opts, shard_bytes)
        assert len(shards) == -(-len(data) // shard_bytes)
        chunks = [c for shard in shards for c in shard_chunks(shard, opts)]
        assert b"".join(chunks) == data
        assert all(c.endswith(b"\n") for c in chunks)
        assert max(len(c) for c in chunks) < 5000 + longest


def test_record_of_several_paragraphs_is_several_lines(tmp_path):
    text = "The cook said he left .\n= = Title = =\nher cookie . The nurse saw him .\n"
    (tmp_path / "r.jsonl").write_text(
        json.dumps({"text": text.rstrip("\n")}) + "\n" + json.dumps({"text": None}) + "\n"
    )
    (tmp_path / "r.txt").write_text(text + "\n")
    for rule in ("wang2021", "default"):
        a = quiet_count(tmp_path / "r.jsonl", ["cook", "nurse"], rule=rule, n_jobs=1)
        b = quiet_count(tmp_path / "r.txt", ["cook", "nurse"], rule=rule, n_jobs=1)
        assert summary(a) == summary(b) and a.n_lines == 4  # 3 lines + the empty record
    # "he" is a word of the piece "The cook said he left "; "him" is not a wang2021 word
    assert count_text(text, ["cook", "nurse"], rule="wang2021").to_numpy().tolist() == [
        [1, 1],
        [0, 0],
    ]


def test_dataset_records_are_text_ending_with_a_line_break():
    import datasets

    records = ["the cook said he", "her cookie .", "the nurse said she\nand left"]
    ds = datasets.Dataset.from_dict({"text": records})
    r = quiet_count(ds, ["cook", "nurse"], rule="wang2021", n_jobs=1)
    as_file = count_text("".join(t + "\n" for t in records), ["cook", "nurse"], rule="wang2021")
    np.testing.assert_array_equal(r.counts.to_numpy(), as_file.to_numpy())
    # "he\n" is not the word "he" (the paper's quirk), as in a file; bare lines would differ
    assert as_file.to_numpy().tolist() == [[0, 1], [0, 0]] and r.n_lines == 4
    assert count_text(records, ["cook", "nurse"], rule="wang2021").to_numpy().tolist() == [
        [1, 1],
        [0, 0],
    ]


def test_globs_and_fsspec_urls(same_text):
    ref = quiet_count(same_text / "a.txt", W32, rule="wang2021", n_jobs=1)
    r = quiet_count(str(same_text / "a.txt*"), W32, rule="wang2021", n_jobs=1)
    names = [f["name"] for f in r.provenance["corpus"]["files"]]
    assert names == ["a.txt", "a.txt.bz2", "a.txt.gz", "a.txt.xz", "a.txt.zst"]
    assert r.n_kept == 5 * ref.n_kept and r.n_lines == 5 * ref.n_lines
    u = quiet_count(
        f"file://{same_text}/a.jsonl", W32, rule="wang2021", n_jobs=2, chunk_chars=100_000
    )
    assert summary(u) == summary(ref)
    assert u.provenance["corpus"]["files"][0]["url"] == f"file://{same_text}/a.jsonl"


def test_memory_filesystem_url(same_text):
    import fsspec

    fs = fsspec.filesystem("memory")
    fs.pipe("/biasamp-test/a.txt.gz", (same_text / "a.txt.gz").read_bytes())
    fs.pipe("/biasamp-test/b.jsonl", (same_text / "a.jsonl").read_bytes())
    try:
        ref = quiet_count(same_text / "a.txt", W32, n_jobs=1)
        for name in ("a.txt.gz", "b.jsonl"):
            r = quiet_count(f"memory://biasamp-test/{name}", W32, n_jobs=1, chunk_chars=100_000)
            assert summary(r) == summary(ref)
            entry = r.provenance["corpus"]["files"][0]
            assert entry["url"].startswith("memory://") and entry["url"].endswith(name)
            assert "sha256" not in entry and entry["bytes"] > 0
        both = quiet_count("memory://biasamp-test/*", W32, n_jobs=1)
        assert both.n_kept == 2 * ref.n_kept
    finally:
        fs.rm("/biasamp-test", recursive=True)


def test_wikipedia_dump_is_stripped_and_counted(tmp_path):
    (tmp_path / "pages-articles.xml.bz2").write_bytes(bz2.compress(DUMP.read_bytes()))
    text = "".join(a + "\n" for a in DUMP_ARTICLES)
    tasks = ["nurse", "cook", "carpenter", "doctor"]
    for rule in ("wang2021", "default"):
        ref = count_text(text, tasks, rule=rule)
        for path in (DUMP, tmp_path / "pages-articles.xml.bz2"):
            r = quiet_count(path, tasks, rule=rule, n_jobs=1)
            np.testing.assert_array_equal(r.counts.to_numpy(), ref.to_numpy())
            assert r.n_lines == text.count("\n") == 12
    # hand-checked: "She trained many nurses.", "Her father was a cook .", "His son became a
    # carpenter too.", "Bob the carpenter said he was proud."; the headings, the table, the
    # reference, the file caption, the comment, the redirect and the talk page (each with
    # "The nurse said he ...") are not counted
    d = quiet_count(DUMP, tasks, n_jobs=1).counts
    assert d.to_numpy().tolist() == [[0, 1], [0, 1], [2, 0], [0, 0]]
    w = quiet_count(DUMP, tasks, rule="wang2021", n_jobs=1).counts  # "She", "Her": missed
    assert w.to_numpy().tolist() == [[0, 0], [0, 0], [2, 0], [0, 0]]


def test_strip_wikitext_articles_equal_the_hand_written_text():
    import hashlib

    from biasamp.corpus._formats import iter_wiki_articles

    assert hashlib.sha256(DUMP.read_bytes()).hexdigest() == (  # as in tests/data/README.md
        "e9eb3dae67c613b64e7a4bf122c868d8d5462bfea7eb95d57032e439ec07f843"
    )
    with open(DUMP, "rb") as f:
        assert list(iter_wiki_articles(f, "dump")) == DUMP_ARTICLES
    assert strip_wikitext("{{Infobox|x=1}}A [[File:a.png|thumb|cap]]b [[w|c]] d.") == "A b c d."


def write(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


BAD_INPUTS = [
    ("bin.txt", b"The cook\x00\x01\x02 said he", r"is binary \(a NUL byte at offset 8\)"),
    (
        "latin1.txt",
        "The caf\xe9 cook said he\n".encode("latin-1"),
        r"is not UTF-8 text \(byte 0xe9 at offset 7\)",
    ),
    ("utf16.txt", "The cook said he\n".encode("utf-16"), r"is binary \(a NUL byte"),
    ("empty.txt", b"", r"is empty \(no text\)"),
    ("blank.txt", b" \n\n", r"is empty \(no text\)"),
    ("empty.txt.gz", gzip.compress(b""), r"is empty \(no text\)"),
    ("corrupt.txt.gz", b"this is not gzip at all\n", r"is not a valid gzip archive"),
    ("corrupt.txt.bz2", b"BZh9garbage", r"is not a valid bz2 archive"),
    ("corrupt.txt.xz", b"\xfd7zXZ\x00garbage", r"is not a valid xz archive"),
    ("corrupt.txt.zst", b"(\xb5/\xfd garbage", r"is not a valid zstd archive"),
    (
        "nocol.jsonl",
        b'{"body": "The cook said he"}\n',
        r"text_column 'text' is not in the records of .*; they have \['body'\]",
    ),
    ("notjson.jsonl", b"The cook said he\n", r"is not JSON Lines"),
    ("intcol.jsonl", b'{"text": 3}\n', r"text_column 'text' must hold strings; got int"),
    ("list.jsonl", b'["The cook"]\n', r"holds a JSON list, not an object"),
    (
        "notwiki.xml",
        b"<html><body>The cook said he</body></html>\n",
        r"is not a Wikipedia XML dump",
    ),
    ("bad.parquet", b"PAR1 this is not parquet PAR1", r"is not a valid Parquet file"),
]


@pytest.mark.parametrize("name,data,match", BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
def test_bad_input_is_a_one_line_error_before_counting(tmp_path, capsys, name, data, match):
    path = write(tmp_path / name, data)
    with pytest.raises(BiasampError, match=match):
        count_cooccurrences(path, ["cook"], n_jobs=1)
    out = tmp_path / "out" / "c.csv"
    assert main(["-q", "count", path, "--tasks", "cook,", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and repr(path) in err
    assert not out.exists() and not out.parent.exists()


def test_damage_found_while_counting_is_an_error_and_writes_nothing(tmp_path, capsys, wikitext_dir):
    data = gzip.compress((wikitext_dir / "wiki.valid.tokens").read_bytes())
    truncated = write(tmp_path / "cut.txt.gz", data[: len(data) // 2])
    nul_late = write(tmp_path / "late.txt", b"The cook said he .\n" * 8000 + b"x\x00y\n")
    for path, match in (
        (truncated, r"cannot be read \(damaged or unreadable\): EOFError"),
        (nul_late, "is binary"),
    ):
        with pytest.raises(BiasampError, match=match):
            count_cooccurrences(path, ["cook"], n_jobs=1)
        with pytest.raises(BiasampError, match=match):
            count_cooccurrences(path, ["cook"], n_jobs=2, chunk_chars=50_000)
        out = tmp_path / "c.csv"
        assert main(["-q", "count", path, "--tasks", "cook,", "-o", str(out)]) == 2
        err = capsys.readouterr().err
        assert re.search(match, err) and err.count("\n") == 1 and not out.exists()
        assert not list(tmp_path.glob(".c.csv.*"))


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"corpus": "nofile-*.txt"}, r"corpus glob 'nofile-\*\.txt' matches no file"),
        ({"corpus": "."}, r"corpus '\.' is a folder; give files or a glob"),
        ({"corpus": "memory://biasamp-none/x.txt"}, r"corpus file not found"),
        ({"fmt": "csv"}, r"fmt must be one of 'text', 'jsonl', 'parquet', 'wikixml'; got 'csv'"),
        ({"engine": "spark"}, r"engine must be one of 'local', 'dask'; got 'spark'"),
        ({"matcher": "re2"}, r"matcher must be one of 'hyperscan', 'numpy'; got 're2'"),
        ({"retries": -1}, r"retries must be a non-negative integer; got -1"),
        ({"text_column": ""}, r"text_column must be a non-empty string"),
        ({"scheduler": "tcp://127.0.0.1:1"}, r"scheduler needs engine 'dask'"),
    ],
)
def test_argument_errors(wikitext_dir, kwargs, match):
    args = {"corpus": str(wikitext_dir / "wiki.valid.tokens"), "tasks": ["cook"]}
    args.update(kwargs)
    with pytest.raises(BiasampError, match=match):
        count_cooccurrences(args.pop("corpus"), args.pop("tasks"), **args)


def test_parquet_missing_or_non_string_column(tmp_path, capsys):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"body": ["The cook said he"], "n": [1]}), tmp_path / "a.parquet")
    with pytest.raises(BiasampError, match=r"text_column 'text' is not a column of .*'body', 'n'"):
        count_cooccurrences(tmp_path / "a.parquet", ["cook"], n_jobs=1)
    with pytest.raises(BiasampError, match=r"text_column 'n' of .* must hold strings; got int64"):
        count_cooccurrences(tmp_path / "a.parquet", ["cook"], n_jobs=1, text_column="n")
    out = tmp_path / "c.csv"
    assert (
        main(
            [
                "-q",
                "count",
                str(tmp_path / "a.parquet"),
                "--tasks",
                "cook,",
                "--text-column",
                "body",
                "--jobs",
                "1",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    assert out.read_text().splitlines()[2] == "cook,1,0"
    assert (
        main(
            [
                "-q",
                "count",
                str(tmp_path / "a.parquet"),
                "--tasks",
                "cook,",
                "--text-column",
                "missing",
                "-o",
                str(tmp_path / "d.csv"),
            ]
        )
        == 2
    )
    assert "text_column 'missing'" in capsys.readouterr().err


def test_broken_xml_dump_and_missing_zstandard(tmp_path, monkeypatch):
    broken = DUMP.read_bytes().replace(b"</page>", b"</pgae>", 1)
    path = write(tmp_path / "pages-articles.xml", broken)
    with pytest.raises(BiasampError, match=r"is not well-formed XML: mismatched tag"):
        count_cooccurrences(path, ["nurse"], n_jobs=1)
    from fsspec.compression import compr

    zst = write(tmp_path / "a.txt.zst", __import__("zstandard").compress(b"The cook said he\n"))
    monkeypatch.delitem(compr, "zstd")
    with pytest.raises(BiasampError, match=r"is zstd-compressed: `pip install zstandard`"):
        count_cooccurrences(zst, ["cook"], n_jobs=1)


def test_hub_records_without_the_text_column(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    (tmp_path / "part.txt").write_text("The cook said he left .\n", encoding="utf-8")
    with pytest.raises(
        BiasampError,
        match=r"text_column 'body' not in the dataset's columns "
        r"\['text'\]",
    ):
        count_cooccurrences(f"hf:{tmp_path}", ["cook"], n_jobs=1, text_column="body")


def test_dataset_offline_is_a_one_line_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = tmp_path / "c.csv"
    assert (
        main(
            [
                "-q",
                "count",
                "--dataset",
                "biasamp-no-such/corpus",
                "--tasks",
                "cook,",
                "-o",
                str(out),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert err.startswith(
        "error: dataset 'biasamp-no-such/corpus' (corpus 'hf:biasamp-no-such/corpus'"
    )
    assert "cannot be loaded" in err and err.count("\n") == 1 and not out.exists()


def test_out_is_checked_before_counting(tmp_path, capsys, wikitext_dir):
    src = str(wikitext_dir / "wiki.valid.tokens")
    assert main(["-q", "count", src, "--tasks", "cook,", "-o", str(tmp_path)]) == 2
    assert "is a folder, not a regular file" in capsys.readouterr().err
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["-q", "count", src, "--tasks", "cook,", "-o", str(blocker / "c.csv")]) == 2
    assert f"{str(blocker)!r} is not a folder" in capsys.readouterr().err
    assert (
        main(
            [
                "-q",
                "count",
                src,
                "--tasks",
                "cook,",
                "--shard-mb",
                "0",
                "-o",
                str(tmp_path / "c.csv"),
            ]
        )
        == 2
    )
    assert "--shard-mb must be a positive number; got 0.0" in capsys.readouterr().err


def test_csv_is_written_whole_or_not_at_all(tmp_path, monkeypatch, wikitext_dir):
    import pandas as pd

    r = quiet_count(wikitext_dir / "wiki.valid.tokens", ["writer", "cook"], n_jobs=1)
    out = tmp_path / "c.csv"
    r.to_csv(out)
    previous = out.read_bytes()

    def broken(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pd.DataFrame, "to_csv", broken)
    with pytest.raises(
        BiasampError,
        match=r"^path '.*c.csv': could not write: No space left on "
        "device; nothing was changed there$",
    ):
        r.to_csv(out, overwrite=True)
    assert out.read_bytes() == previous and [p.name for p in tmp_path.iterdir()] == ["c.csv"]
    monkeypatch.undo()
    r.to_csv(out, overwrite=True)
    assert out.read_text().splitlines()[1:] == [
        "task,he,she",
        *[f"{t},{h},{s}" for t, (h, s) in zip(r.counts.index, r.counts.to_numpy())],
    ]


def test_provenance_of_a_count(tmp_path, capsys, same_text):
    out = tmp_path / "c.csv"
    assert (
        main(
            [
                "-q",
                "count",
                str(same_text / "a.txt.gz"),
                str(same_text / "a.parquet"),
                "--tasks",
                "writer,editor",
                "--jobs",
                "1",
                "--name",
                "wt-valid",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert (
        main(["base-rates", "show", f"file:{out}", "--tasks", "writer,editor", "--provenance"]) == 0
    )
    printed = capsys.readouterr().out
    prov = json.loads(printed[printed.index("{") :])["file_provenance"]
    files = prov["corpus"]["files"]
    assert [f["name"] for f in files] == ["a.txt.gz", "a.parquet"]
    assert files[0]["compression"] == "gzip" and files[0]["format"] == "text"
    import hashlib

    assert files[0]["sha256"] == hashlib.sha256((same_text / "a.txt.gz").read_bytes()).hexdigest()
    assert prov["engine"] == {"engine": "local", "jobs": 1}
    assert prov["matcher"] == "hyperscan" and prov["rule"] == "default"
    assert prov["corpus"]["name"] == "wt-valid" and prov["n_lines"] == 2 * 3760
    assert prov["n_kept"] <= prov["n_sentences"] and prov["seconds"] >= 0
    assert prov["started"].endswith("+00:00")
    assert (
        main(
            [
                "-q",
                "count",
                str(same_text / "a.txt"),
                "--tasks",
                "writer,",
                "--no-hash",
                "--jobs",
                "1",
                "-o",
                str(out),
                "--overwrite",
            ]
        )
        == 0
    )
    first = json.loads(out.read_text().splitlines()[0][len("# provenance: ") :])
    assert "sha256" not in first["corpus"]["files"][0]


@pytest.mark.parametrize("jobs", [1, 2])
def test_progress_reaches_the_corpus_size(same_text, jobs):
    from biasamp._progress import Progress

    class Recorder(Progress):
        def __init__(self):
            self.stages, self.done = [], 0

        def stage(self, name, total, unit="it"):
            self.stages.append((name, total, unit))

        def advance(self, n=1):
            self.done += n

    rec = Recorder()
    quiet_count(
        [same_text / "a.txt", same_text / "a.txt.bz2"],
        W32,
        n_jobs=jobs,
        chunk_chars=200_000,
        progress=rec,
    )
    total = (same_text / "a.txt").stat().st_size + (same_text / "a.txt.bz2").stat().st_size
    assert rec.stages == [("counting (default)", total, "B")]  # known before the first step
    assert rec.done == total


def test_out_that_is_a_device_fifo_or_link_is_refused_before_counting(
    tmp_path, capsys, wikitext_dir
):
    import os

    src = str(wikitext_dir / "wiki.valid.tokens")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    target = tmp_path / "real.csv"
    target.write_text("keep\n")
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    cases = [
        ("/dev/null", "is a character device, not a regular file"),
        (str(fifo), "is a FIFO, not a regular file"),
        (str(link), f"(a link to {str(target)!r}) is not a counts CSV biasamp wrote"),
    ]
    for out, message in cases:
        assert main(["-q", "count", src, "--tasks", "cook,", "-o", out, "--overwrite"]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: --out {out!r} ") and message in err, err
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")
    assert fifo.is_fifo() and link.is_symlink() and target.read_text() == "keep\n"
    # the library refuses too (CorpusCounts.to_csv)
    r = quiet_count(wikitext_dir / "wiki.valid.tokens", ["cook"], n_jobs=1)
    with pytest.raises(BiasampError, match=r"path .* exists; choose a new file"):
        r.to_csv(link)
    assert link.is_symlink() and target.read_text() == "keep\n"
    # a link is followed on purpose: the file it names is written, the link stays
    target.unlink()
    r.to_csv(link)
    assert link.is_symlink() and target.read_text().startswith("# provenance: ")
    r.to_csv(link, overwrite=True)  # a counts CSV biasamp wrote, through the link
    dangling = tmp_path / "nowhere.csv"
    dangling.symlink_to(tmp_path / "no" / "such" / "c.csv")
    assert main(["-q", "count", src, "--tasks", "cook,", "-o", str(dangling)]) == 2
    assert "whose folder does not exist" in capsys.readouterr().err
