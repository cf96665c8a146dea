"""The ``dask`` engine: shards as tasks on a Dask distributed cluster, reduced on the cluster.

Each shard is one task (``retries`` times re-run when it fails; a task's result is only
used once it succeeded, so a retried shard is counted once). As shard tasks finish (the
scheduler tells the client, which moves the progress bar), their count matrices are summed
by small sum tasks on the cluster, eight at a time, until one is left: the client receives
one matrix. ``scheduler=None`` starts a ``LocalCluster`` of ``n_workers`` processes.
"""

from __future__ import annotations

import uuid

from .._errors import BiasampError, MissingDependencyError
from ._engines import EngineRun, Totals
from ._shards import count_chunks, hash_input, shard_chunks

__all__ = ["run_dask"]

_FAN_IN = 8
#: Seconds to wait for a --scheduler to answer.
CONNECT_TIMEOUT = 10.0


def _count_shard(rule, shard, opts):
    return count_chunks(rule, shard_chunks(shard, opts), shard.describe())


def _sum_counts(*results):
    counts = results[0][0].copy()
    lines = sentences = kept = 0
    for i, (c, n_l, n_s, n_k) in enumerate(results):
        if i:
            counts += c
        lines, sentences, kept = lines + n_l, sentences + n_s, kept + n_k
    return counts, lines, sentences, kept


def _hash(inp, opts):
    return inp.url, hash_input(inp, opts)


def _connect(scheduler: str | None, n_workers: int, timeout: float):
    try:
        import distributed
    except ImportError as exc:
        raise MissingDependencyError("engine 'dask' needs `pip install 'biasamp[dask]'` "
                                     "(dask[distributed]); got ImportError") from exc
    if scheduler is None:
        cluster = distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1,
                                           processes=True, dashboard_address=":0")
        return distributed.Client(cluster), cluster
    try:
        return distributed.Client(scheduler, timeout=timeout), None
    except Exception as exc:  # noqa: BLE001 - OSError, TimeoutError, ValueError (bad address)
        reason = " ".join(str(exc).split())[:200]
        raise BiasampError(f"scheduler {scheduler!r} cannot be reached: "
                           f"{type(exc).__name__}: {reason}") from None


def run_dask(rule, plan, *, scheduler: str | None = None, n_jobs: int = 2, bar=None,
             hash_inputs: bool = True, retries: int = 1) -> EngineRun:
    """Count the plan's shards on a Dask cluster (see the module docstring)."""
    if plan.streams:
        raise BiasampError("engine 'dask' counts files and URLs (shards that workers read); "
                           "a datasets corpus is read by this process: use engine 'local', "
                           "or give the dataset's files (hf://datasets/NAME/...)")
    client, cluster = _connect(scheduler, n_jobs, CONNECT_TIMEOUT)
    try:
        return _run(client, rule, plan, bar=bar, hash_inputs=hash_inputs, retries=retries)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _run(client, rule, plan, *, bar, hash_inputs, retries) -> EngineRun:
    from distributed import __version__ as distributed_version
    from distributed import as_completed

    token = uuid.uuid4().hex[:12]
    opts = plan.opts
    size_of, what = {}, {}
    futures = []
    for i, shard in enumerate(plan.shards):
        fut = client.submit(_count_shard, rule, shard, opts, key=f"biasamp-shard-{token}-{i}",
                            retries=retries, pure=False)
        size_of[fut.key], what[fut.key] = shard.size, shard.describe()
        futures.append(fut)
    hashing = [client.submit(_hash, inp, opts, key=f"biasamp-sha256-{token}-{i}",
                             retries=retries, pure=False)
               for i, inp in enumerate(plan.inputs) if inp.local and hash_inputs]
    done = as_completed(futures)
    ready, n_sums = [], 0
    for fut in done:
        if fut.status != "finished":
            _fail(fut, what, retries)
        if bar is not None and fut.key in size_of:
            bar.advance(size_of[fut.key])
        ready.append(fut)
        if len(ready) >= _FAN_IN or (len(ready) > 1 and done.is_empty()):
            total = client.submit(_sum_counts, *ready, key=f"biasamp-sum-{token}-{n_sums}",
                                  retries=retries, pure=False)
            n_sums += 1
            done.add(total)
            ready = []
    totals = Totals(rule._zeros())
    if ready:
        totals.add(ready[0].result())
    hashes = dict(client.gather(hashing)) if hashing else {}
    info = {"engine": "dask", "scheduler": client.scheduler.address,
            "n_workers": len(client.scheduler_info().get("workers", {})),
            "shards": len(plan.shards), "retries": retries,
            "distributed_version": distributed_version}
    return EngineRun(totals, hashes, info)


def _fail(fut, what: dict, retries: int):
    try:
        fut.result()
    except Exception as exc:  # noqa: BLE001 - a worker's error, re-raised as one line
        where = what.get(fut.key, fut.key)
        reason = " ".join(str(exc).split())[:300]
        if not isinstance(exc, BiasampError):
            reason = f"{type(exc).__name__}: {reason}"
        raise BiasampError(f"shard {where} failed after {retries} retries: {reason}") from None
    raise BiasampError(f"shard {what.get(fut.key, fut.key)} ended as {fut.status!r}")
