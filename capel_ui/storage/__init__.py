"""Persistence for CAPEL Studio: generation runs and benchmark results, in SQLite or PostgreSQL.

Three modules, read in this order: `schema` (the tables, written once, and the frozen records read from
them), `engine` (where the database is, SQLite tuning, creating and upgrading the schema) and `repo` (the
functions below). Get an engine with get_engine() (cached, schema up to date; StorageError if the database
cannot be used), then call the functions; they return frozen records, never live ORM objects.
This package must never import streamlit: the CLI and the benchmark runner use it too.
"""

from __future__ import annotations

# Not storage's: only until capel_ui/ui/benchmark.py imports it from capel_ui.vocab; then delete this line.
from ..vocab import PROJECT_ROOT  # noqa: F401
from .engine import (
    StorageError,
    create_migrated_engine,
    database_fault,
    database_label,
    database_url,
    dispose_engines,
    get_engine,
)
from .repo import (
    CSV_COLUMNS,
    DISTINCT_COLUMNS,
    WRITE_FAULTS,
    add_bench_result,
    bench_results,
    clean_base_url,
    create_run,
    delete_bench_run,
    delete_run,
    distinct_values,
    done_keys,
    errors_summary,
    get_bench_run,
    get_or_create_bench_run,
    get_run,
    list_bench_runs,
    list_runs,
    runs_to_csv,
    set_bench_run_status,
    unassessed_runs,
    update_run,
)
from .schema import BenchResultRecord, BenchRunRecord, RunRecord, utcnow

__all__ = [
    "CSV_COLUMNS",
    "DISTINCT_COLUMNS",
    "WRITE_FAULTS",
    "BenchResultRecord",
    "BenchRunRecord",
    "RunRecord",
    "StorageError",
    "add_bench_result",
    "bench_results",
    "clean_base_url",
    "create_migrated_engine",
    "create_run",
    "database_fault",
    "database_label",
    "database_url",
    "delete_bench_run",
    "delete_run",
    "dispose_engines",
    "distinct_values",
    "done_keys",
    "errors_summary",
    "get_bench_run",
    "get_engine",
    "get_or_create_bench_run",
    "get_run",
    "list_bench_runs",
    "list_runs",
    "runs_to_csv",
    "set_bench_run_status",
    "unassessed_runs",
    "update_run",
    "utcnow",
]
