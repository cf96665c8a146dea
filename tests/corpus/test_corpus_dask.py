"""The Dask engine of biasamp.corpus on a real LocalCluster (2 worker processes)."""

import gzip
import json
import logging
import sys
import warnings

import distributed  # the test extra installs dask[distributed]
import numpy as np
import pytest

from biasamp import BiasampError
from biasamp._errors import ZeroRowWarning
from biasamp.cli import main
from biasamp.corpus import count_cooccurrences
from biasamp.tasks import load_tasks

W32 = load_tasks("winobias32").words


@pytest.fixture(autouse=True)
def logging_to_the_real_stderr():
    """main() points logging at the captured stderr; the cluster's threads log after it closes."""
    yield
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.StreamHandler) and getattr(handler.stream, "closed", False):
            handler.stream = sys.__stderr__  # (setStream would flush the closed one)


@pytest.fixture(scope="module", autouse=True)
def quiet_distributed():
    """The scheduler's INFO lines are not what these tests look at."""
    logger = logging.getLogger("distributed")
    level = logger.level
    logger.setLevel(logging.WARNING)
    yield
    logger.setLevel(level)


@pytest.fixture(scope="module")
def cluster(quiet_distributed):
    """A LocalCluster of 2 single-threaded worker processes, shared by this module."""
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    ) as c:
        yield c


@pytest.fixture(scope="module")
def corpus_files(tmp_path_factory, wikitext_dir):
    """WikiText-103 valid as text, and test as JSON Lines plus gzip."""
    d = tmp_path_factory.mktemp("dask-corpus")
    (d / "valid.txt").write_bytes((wikitext_dir / "wiki.valid.tokens").read_bytes())
    lines = (wikitext_dir / "wiki.test.tokens").read_text(encoding="utf-8").split("\n")[:-1]
    (d / "test.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in lines))
    (d / "test.jsonl.gz").write_bytes(gzip.compress((d / "test.jsonl").read_bytes()))
    return d


def quiet_count(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ZeroRowWarning)
        return count_cooccurrences(*args, **kwargs)


def summary(r):
    return r.counts.to_numpy().tolist(), r.n_lines, r.n_sentences, r.n_kept


@pytest.mark.parametrize("rule", ["wang2021", "default"])
def test_dask_equals_local_single_and_pool(cluster, corpus_files, rule):
    files = [
        corpus_files / "valid.txt",
        corpus_files / "test.jsonl",
        corpus_files / "test.jsonl.gz",
    ]
    single = quiet_count(files, W32, rule=rule, n_jobs=1)
    pool = quiet_count(files, W32, rule=rule, n_jobs=2, chunk_chars=150_000)
    dask = quiet_count(
        files,
        W32,
        rule=rule,
        engine="dask",
        scheduler=cluster.scheduler_address,
        chunk_chars=150_000,
    )
    assert summary(single) == summary(pool) == summary(dask)
    assert single.n_lines == 3760 + 2 * 4358 and single.n_kept > 50
    info = dask.provenance["engine"]
    assert info["engine"] == "dask" and info["n_workers"] == 2 and info["retries"] == 1
    assert info["shards"] == 8 + 9 + 1  # byte ranges of the two plain files + the .gz
    assert info["scheduler"] == cluster.scheduler_address
    hashes = [f["sha256"] for f in dask.provenance["corpus"]["files"]]
    assert hashes == [f["sha256"] for f in single.provenance["corpus"]["files"]]


def test_failing_shard_is_retried_once_and_counted_once(cluster, corpus_files, tmp_path):
    """A shard whose first read fails (on a worker) is run again; its counts enter once."""
    marker = tmp_path / "failed-once"

    def install_flaky_protocol(marker=str(marker), fail=True):
        import os

        import fsspec
        from fsspec.implementations.local import LocalFileSystem

        class FlakyFileSystem(LocalFileSystem):
            """file:// whose first open of a byte range (in any process) fails."""

            protocol = "biasampflaky"

            @classmethod
            def _strip_protocol(cls, path):
                # fsspec before 2026.4 strips only "file://" for a LocalFileSystem subclass
                if isinstance(path, str) and path.startswith("biasampflaky://"):
                    path = path[len("biasampflaky://") :]
                return super()._strip_protocol(path)

            def unstrip_protocol(self, name):
                # fsspec before 2026.4 writes "file://" for any LocalFileSystem subclass
                return f"biasampflaky://{self._strip_protocol(name)}"

            def _open(self, path, mode="rb", **kwargs):
                if fail:
                    try:
                        os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
                    except FileExistsError:
                        pass
                    else:
                        raise OSError("injected failure of a shard's first read")
                return super()._open(path, mode, **kwargs)

        fsspec.register_implementation("biasampflaky", FlakyFileSystem, clobber=True)

    install_flaky_protocol(fail=False)  # this process only lists and checks the file
    client = distributed.Client(cluster.scheduler_address)
    try:
        client.run(install_flaky_protocol)
        url = f"biasampflaky://{corpus_files / 'valid.txt'}"
        ref = quiet_count(corpus_files / "valid.txt", W32, rule="wang2021", n_jobs=1)
        got = quiet_count(
            url,
            W32,
            rule="wang2021",
            engine="dask",
            hash_inputs=False,
            scheduler=cluster.scheduler_address,
            chunk_chars=150_000,
        )
        assert marker.exists()  # one shard did fail once ...
        assert summary(got) == summary(ref)  # ... and was counted once
        marker.unlink()
        with pytest.raises(
            BiasampError,
            match=r"^shard biasampflaky://.* bytes \d+-\d+ failed "
            r"after 0 retries: corpus .* cannot be read .*OSError: injected failure",
        ):
            quiet_count(
                url,
                W32,
                engine="dask",
                retries=0,
                hash_inputs=False,
                scheduler=cluster.scheduler_address,
                chunk_chars=150_000,
            )
    finally:
        client.close()


def test_cli_dask_engine_with_scheduler_and_provenance(cluster, corpus_files, tmp_path, capsys):
    out = tmp_path / "c.csv"
    assert (
        main(
            [
                "count",
                str(corpus_files / "test.jsonl.gz"),
                "--tasks",
                "winobias32",
                "--rule",
                "wang2021",
                "--engine",
                "dask",
                "--scheduler",
                cluster.scheduler_address,
                "--retries",
                "2",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    assert "sentences counted" in capsys.readouterr().out
    prov = json.loads(out.read_text().splitlines()[0][len("# provenance: ") :])
    assert prov["engine"]["engine"] == "dask" and prov["engine"]["retries"] == 2
    ref = quiet_count(corpus_files / "test.jsonl", W32, rule="wang2021", n_jobs=1)
    rows = [line.split(",") for line in out.read_text().splitlines()[2:]]
    assert [[int(h), int(s)] for _, h, s in rows] == ref.counts.to_numpy().tolist()


def test_unreachable_scheduler_is_a_one_line_error(tmp_path, capsys, monkeypatch, corpus_files):
    import socket

    from biasamp.corpus import _engines

    monkeypatch.setattr(_engines, "CONNECT_TIMEOUT", 1.0)
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = tmp_path / "c.csv"
    assert (
        main(
            [
                "-q",
                "count",
                str(corpus_files / "valid.txt"),
                "--tasks",
                "nurse,",
                "--engine",
                "dask",
                "--scheduler",
                f"tcp://127.0.0.1:{port}",
                "-o",
                str(out),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert err.startswith(f"error: scheduler 'tcp://127.0.0.1:{port}' cannot be reached: ")
    assert err.count("\n") == 1 and not out.exists()


def test_datasets_corpus_needs_the_local_engine(cluster):
    import datasets

    ds = datasets.Dataset.from_dict({"text": ["The cook said he left ."]})
    with pytest.raises(BiasampError, match="engine 'dask' counts files and URLs"):
        count_cooccurrences(ds, ["cook"], engine="dask", scheduler=cluster.scheduler_address)


def test_engine_dask_alone_starts_a_local_cluster(corpus_files):
    r = quiet_count(corpus_files / "valid.txt", W32, engine="dask", n_jobs=2, chunk_chars=300_000)
    ref = quiet_count(corpus_files / "valid.txt", W32, n_jobs=1)
    assert summary(r) == summary(ref)
    assert r.provenance["engine"]["n_workers"] == 2
    np.testing.assert_array_equal(r.counts.to_numpy(), ref.counts.to_numpy())
