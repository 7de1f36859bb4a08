"""Benchmark suites, runner, aggregation and charts (no streamlit here)."""
