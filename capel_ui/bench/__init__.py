"""Benchmark suites, runner, aggregation and charts (no streamlit here).

- `suites`: load_suite(name, lengths=, limit=, seed=, lang=, file=, control=) -> Suite of Items;
  parse_custom(data, name).
- `runner`: run_bench(BenchConfig, progress=, stop=) stores every sample and resumes by key;
  list_runs(), run_results(engine, ids), load_rows(ids, per_run=) for the page.
- `report`: aggregate(records) -> rows per (model, control, mode, lang, target) plus overall rows; format_table().
- `charts`: mald_em_figure, ls_heatmap, error_figure, results_csv, figure_html.

Modules are imported on use, so `python -m capel_ui count` does not load plotly, SQLAlchemy or openai.
"""
