"""Persistence for CAPEL Studio: generation runs and benchmark results, in any SQLAlchemy database.

Default is the SQLite file data/capel.db; set DATABASE_URL for anything else. Get an engine with
get_engine() (cached, migrated), then call the plain functions below; they return frozen dataclasses.
This package must never import streamlit: the CLI and benchmark runner use it too.
"""

from __future__ import annotations

from .coltypes import utcnow
from .engine import PROJECT_ROOT, create_migrated_engine, database_url, dispose_engines, get_engine
from .export import CSV_COLUMNS, errors_summary, runs_to_csv
from .migrations import MIGRATIONS, applied_migrations, migrate
from .models import BENCH_RESULT_STATUSES, BENCH_RUN_STATUSES, RUN_STATUSES, Base, BenchResult, BenchRun, Run
from .records import BenchResultRecord, BenchRunRecord, RunRecord
from .repo import (
    DISTINCT_COLUMNS,
    add_bench_result,
    bench_results,
    clean_base_url,
    create_run,
    delete_bench_run,
    delete_run,
    distinct_values,
    done_keys,
    get_bench_run,
    get_or_create_bench_run,
    get_run,
    list_bench_runs,
    list_runs,
    set_bench_run_status,
    update_run,
)

__all__ = [
    "BENCH_RESULT_STATUSES",
    "BENCH_RUN_STATUSES",
    "CSV_COLUMNS",
    "DISTINCT_COLUMNS",
    "MIGRATIONS",
    "PROJECT_ROOT",
    "RUN_STATUSES",
    "Base",
    "BenchResult",
    "BenchResultRecord",
    "BenchRun",
    "BenchRunRecord",
    "Run",
    "RunRecord",
    "add_bench_result",
    "applied_migrations",
    "bench_results",
    "clean_base_url",
    "create_migrated_engine",
    "create_run",
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
    "migrate",
    "runs_to_csv",
    "set_bench_run_status",
    "update_run",
    "utcnow",
]
