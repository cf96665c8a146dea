"""Engines: who counts the shards. ``local`` (this process, or a process pool) and ``dask``.

Every engine sums the same per-shard counts (a shard's count is a pure function of its
description), so engines differ in speed and reach, never in the counts.
"""

from __future__ import annotations

import functools
import multiprocessing
import threading
import uuid
from collections import deque
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from .._errors import BiasampError, MissingDependencyError
from .._registry import Registry
from ._rule_base import CountingRule
from ._shards import add_counts, count_chunks, guarded, hash_input, shard_chunks


@dataclass
class EngineRun:
    """What an engine returns: the summed ``(counts, n_lines, n_sentences, n_kept)``, sha256
    of local files, its own provenance."""

    totals: tuple
    hashes: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)


class _InProcess(Executor):
    """An executor that runs each task in this process as it is submitted (``n_jobs=1``)."""

    def submit(self, fn, /, *args):
        fut: Future = Future()
        try:
            fut.set_result(fn(*args))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller through the future
            fut.set_exception(exc)
        return fut


def run_local(rule: CountingRule, plan, *, n_jobs: int, bar, hash_inputs: bool) -> EngineRun:
    """Count in this process (``n_jobs=1``) or over a pool of ``n_jobs`` processes."""
    global _WORKER  # noqa: PLW0603 - this process is the worker of n_jobs=1
    totals, opts = (rule._zeros(), 0, 0, 0), plan.opts
    advance = None if bar is None else bar.advance
    # whole files read here, their progress the stored bytes read: all of them in one
    # process; in a pool, a few whole compressed files (they cannot keep the pool busy)
    whole = [s for s in plan.shards if s.length is None and (n_jobs == 1 or not s.row_groups)]
    streamed = whole if n_jobs == 1 or 0 < len(whole) < n_jobs else []
    shards = [s for s in plan.shards if s not in streamed]
    # (where, chunks, progress by chunk length; streamed files report the bytes they read)
    streams = [(where, guarded(stream, where), True) for where, stream in plan.streams] + [
        (s.describe(), guarded(shard_chunks(s, opts, advance), s.describe()), False)
        for s in streamed
    ]

    # byte ranges of text files: the bytes their rule has scanned move the progress (within
    # one long line; a pool's workers add them to a shared counter this process reads);
    # other shards move it when they are done
    scanned, seen = multiprocessing.Value("q", 0) if n_jobs > 1 else None, [0]

    def work():
        for shard in shards:
            yield _shard_task, (shard,), None if _scanned(shard) else shard.size
        for where, stream, by_chunk in streams:
            for chunk in stream:
                yield _chunk_task, (chunk, where), len(chunk) if by_chunk else None

    def sync():
        now = 0 if scanned is None else scanned.value
        if bar is not None and now > seen[0]:
            bar.advance(now - seen[0])
        seen[0] = now

    def collect(fut, step):
        nonlocal totals
        while not fut.done():
            wait([fut], timeout=0.5)
            sync()
        totals = add_counts(totals, fut.result())
        sync()
        if bar is not None and step:
            bar.advance(step)

    if n_jobs == 1:
        _WORKER = (rule, opts, advance)
        pool = _InProcess()
    else:
        shared = scanned if bar is not None else None
        pool = ProcessPoolExecutor(n_jobs, initializer=_init_worker, initargs=(rule, opts, shared))
    to_hash = [inp for inp in plan.inputs if inp.local] if hash_inputs else []
    stop = threading.Event()  # set when the count fails: no hashing of a large file for it
    # sha256 in a thread while counting (hashlib releases the GIL on large blocks)
    with pool, ThreadPoolExecutor(1) as hasher:
        hashing = {inp.url: hasher.submit(hash_input, inp, opts, stop) for inp in to_hash}
        pending: deque = deque()  # counts: at most 2 per worker in flight (bounded memory)
        try:
            for fn, args, step in work():
                pending.append((pool.submit(fn, *args), step))
                while len(pending) >= 2 * n_jobs:
                    collect(*pending.popleft())
            while pending:
                collect(*pending.popleft())
            hashes = {url: fut.result() for url, fut in hashing.items()}
        except BaseException:
            stop.set()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        finally:
            _WORKER = None
    return EngineRun(totals, hashes, {"engine": "local", "jobs": n_jobs})


_WORKER: tuple | None = None


def _init_worker(rule: CountingRule, opts, scanned=None) -> None:
    global _WORKER  # noqa: PLW0603 - a pool worker's state, set once by its initializer

    def tell(n):
        with scanned.get_lock():
            scanned.value += n

    _WORKER = (rule, opts, None if scanned is None else tell)


def _scanned(shard) -> bool:
    """Whether a shard's progress is the bytes its rule scans (a byte range of a text file)."""
    return shard.length is not None and shard.inp.fmt == "text"


def _shard_task(shard, worker=None):
    """Count a shard in a worker, or (Dask) with ``worker = (rule, opts, None)``."""
    rule, opts, tell = worker or _WORKER
    return count_chunks(
        rule, shard_chunks(shard, opts), shard.describe(), tell if _scanned(shard) else None
    )


def _chunk_task(chunk: bytes, where: str):
    return count_chunks(_WORKER[0], [chunk], where)


def _hash_task(inp, opts):
    return inp.url, hash_input(inp, opts)


_FAN_IN = 8
#: Seconds to wait for a --scheduler to answer.
CONNECT_TIMEOUT = 10.0


def _sum_counts(*results):
    return functools.reduce(add_counts, results)


def _connect(scheduler: str | None, n_workers: int):
    try:
        import distributed
    except ImportError as exc:
        raise MissingDependencyError(
            "engine 'dask' needs `pip install 'biasamp[dask]'` (dask[distributed]); got ImportError"
        ) from exc
    if scheduler is None:
        cluster = distributed.LocalCluster(
            n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=":0"
        )
        return distributed.Client(cluster), cluster
    try:
        return distributed.Client(scheduler, timeout=CONNECT_TIMEOUT), None
    except Exception as exc:  # noqa: BLE001 - OSError, TimeoutError, ValueError (bad address)
        reason = " ".join(str(exc).split())[:200]
        raise BiasampError(
            f"scheduler {scheduler!r} cannot be reached: {type(exc).__name__}: {reason}"
        ) from None


def run_dask(
    rule,
    plan,
    *,
    scheduler: str | None = None,
    n_jobs: int = 2,
    bar=None,
    hash_inputs: bool = True,
    retries: int = 1,
) -> EngineRun:
    """Count the plan's shards on a Dask cluster: a task per shard (a retried one counts once),
    summed on the cluster ``_FAN_IN`` at a time as they finish."""
    if plan.streams:
        raise BiasampError(
            "engine 'dask' counts files and URLs (shards that workers read); "
            "a datasets corpus is read by this process: use engine 'local', "
            "or give the dataset's files (hf://datasets/NAME/...)"
        )
    client, cluster = _connect(scheduler, n_jobs)
    try:
        from distributed import __version__ as distributed_version
        from distributed import as_completed

        token, opts = uuid.uuid4().hex[:12], plan.opts
        shard_of = {f"biasamp-shard-{token}-{i}": s for i, s in enumerate(plan.shards)}
        futures = client.map(
            _shard_task,
            list(shard_of.values()),
            worker=(rule, opts, None),
            key=list(shard_of),
            retries=retries,
            pure=False,
        )
        local = [inp for inp in plan.inputs if inp.local] if hash_inputs else []
        hashing = client.map(
            _hash_task,
            local,
            opts=opts,
            key=[f"biasamp-sha256-{token}-{i}" for i in range(len(local))],
            retries=retries,
            pure=False,
        )
        done = as_completed(futures)
        ready, n_sums = [], 0
        for fut in done:
            shard = shard_of.get(fut.key)
            if fut.status != "finished":
                _fail(fut, shard.describe() if shard else fut.key, retries)
            if bar is not None and shard is not None:
                bar.advance(shard.size)
            ready.append(fut)
            if len(ready) >= _FAN_IN or (len(ready) > 1 and done.is_empty()):
                key = f"biasamp-sum-{token}-{n_sums}"
                done.add(client.submit(_sum_counts, *ready, key=key, retries=retries, pure=False))
                n_sums, ready = n_sums + 1, []
        totals = ready[0].result() if ready else (rule._zeros(), 0, 0, 0)
        hashes = dict(client.gather(hashing)) if hashing else {}
        info = {
            "engine": "dask",
            "scheduler": client.scheduler.address,
            "n_workers": len(client.scheduler_info().get("workers", {})),
            "shards": len(plan.shards),
            "retries": retries,
            "distributed_version": distributed_version,
        }
        return EngineRun(totals, hashes, info)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _fail(fut, where: str, retries: int):
    try:
        fut.result()
    except Exception as exc:  # noqa: BLE001 - a worker's error, re-raised as one line
        reason = " ".join(str(exc).split())[:300]
        if not isinstance(exc, BiasampError):
            reason = f"{type(exc).__name__}: {reason}"
        raise BiasampError(f"shard {where} failed after {retries} retries: {reason}") from None
    raise BiasampError(f"shard {where} ended as {fut.status!r}")


#: Engines: name -> ``run(rule, plan, **options) -> EngineRun``.
ENGINES = Registry("engine")
ENGINES.register(
    "local",
    run_local,
    description="this machine: one process (--jobs 1) or a "
    "process pool (default all cores); no extra dependency",
)
ENGINES.register(
    "dask",
    run_dask,
    description="a Dask distributed cluster (--scheduler "
    "tcp://HOST:8786) or a local one; needs biasamp[dask]",
)
