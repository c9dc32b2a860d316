"""The corpus tables as Parquet: one folder per table (`DIR/sessions/*.parquet`, …), the same
columns as the embedded index (`schema.arrow_schema`), written by this machine or by a Ray
cluster, and read back by `serve --corpus DIR` and `sql --parquet DIR`."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from ..core.storage import fs_name, url_name
from .discovery import corpus_files
from .batch import whole_tables
from .joins import join_conversations
from .schema import TABLES, arrow_table
from .sql import lock_down


def session_files(roots: list[Path]) -> list[str]:
    """The `file` keys of every session under `roots`, as the index names them."""
    return [url_name(str(p)) for root in roots for p in corpus_files(Path(root).resolve())]


def _tables(files: list[str]) -> dict[str, pa.Table]:
    """Every table's rows of `files` (`batch.whole_tables`: the projection's for pi's files, the
    seam's for the others; a file that fails has no rows, as in the embedded build)."""
    return whole_tables([fs_name(f) for f in files])


FILES_PER_BATCH = 64  # session files made at once on this machine


def write_embedded(files: list[str], out: Path, on_file: Callable[[int], None] | None = None) -> dict[str, int]:
    """Make every file's rows on this machine and write each table to `out/<table>/part-0.parquet`;
    the rows written per table."""
    parts: dict[str, list[pa.Table]] = {t: [] for t in TABLES}
    for start in range(0, len(files), FILES_PER_BATCH):
        for t, table in _tables(files[start:start + FILES_PER_BATCH]).items():
            parts[t].append(table)
        if on_file:
            on_file(min(start + FILES_PER_BATCH, len(files)))
    counts = {}
    for t in TABLES:
        (out / t).mkdir(parents=True, exist_ok=True)
        table = pa.concat_tables(parts[t]) if parts[t] else arrow_table(t, [])
        pq.write_table(table, out / t / "part-0.parquet")
        counts[t] = table.num_rows
    return counts


FILES_PER_TASK = 8  # session files one Ray task extracts


def _writer(out: str):
    """(Ray) the task that extracts a batch of files and writes each table's rows of them as one
    Parquet file of its own (`out/<table>/part-<uuid>.parquet`): the rows go from the worker
    that made them to the files, never through the object store, and are converted once."""
    def extract_and_write(batch: pa.Table) -> pa.Table:
        import uuid

        from pyarrow import fs

        tables = _tables(batch.column("file").to_pylist())
        filesystem, base = fs.FileSystem.from_uri(out)
        part = uuid.uuid4().hex
        written = []
        for t in TABLES:
            if tables[t].num_rows:
                filesystem.create_dir(f"{base}/{t}", recursive=True)
                pq.write_table(tables[t], f"{base}/{t}/part-{part}.parquet", filesystem=filesystem)
            written.append(tables[t].num_rows)
        return pa.table({"table": list(TABLES), "rows": written})
    return extract_and_write


def write_ray(files: list[str], out: str, address: str | None = None) -> dict[str, int]:
    """The same tables built on a Ray cluster (`address`, else $RAY_ADDRESS, else a local one):
    Ray Data maps the extractor over the list of files, a few files a task, and each task
    writes its rows as Parquet to `out` (any path pyarrow can write); the rows written per table.
    The list is cut into blocks here, so that no shuffle runs before the work starts."""
    import ray

    if not ray.is_initialized():
        ray.init(address=address or os.environ.get("RAY_ADDRESS") or None, include_dashboard=False,
                 log_to_driver=False, logging_level="ERROR")
    ray.data.DataContext.get_current().enable_progress_bars = False
    if "://" not in out:
        out = str(Path(out).resolve())
    blocks = [pa.table({"file": pa.array(files[i:i + FILES_PER_TASK], pa.string())})
              for i in range(0, len(files), FILES_PER_TASK)] or [pa.table({"file": pa.array([], pa.string())})]
    counts = {t: 0 for t in TABLES}
    written = ray.data.from_arrow(blocks).map_batches(_writer(out), batch_format="pyarrow",
                                                       batch_size=FILES_PER_TASK).take_all()
    for r in written:
        counts[r["table"]] += r["rows"]
    return counts


def table_rows(folder: Path) -> dict[str, int]:
    """The rows of each table of a Parquet folder."""
    return {t: sum(pq.ParquetFile(p).metadata.num_rows for p in (folder / t).glob("*.parquet")) for t in TABLES}


def parquet_connection(folder: Path) -> duckdb.DuckDBPyConnection:
    """An in-memory database holding the Parquet tables of `folder`, reading no other file."""
    con = duckdb.connect(":memory:")
    for t in TABLES:
        files = sorted(str(p) for p in (folder / t).glob("*.parquet"))
        if files:
            con.execute(f"CREATE TABLE {t} AS SELECT * FROM read_parquet(?)", [files])
        else:
            con.register("empty", arrow_table(t, []))
            con.execute(f"CREATE TABLE {t} AS SELECT * FROM empty")
            con.unregister("empty")
    join_conversations(con)  # (each task wrote its files' rows alone: their conversations are decided here)
    lock_down(con)
    return con
