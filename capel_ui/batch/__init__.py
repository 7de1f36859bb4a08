"""Batch (issue 35): a spreadsheet of exact-length texts, resumable, with platform packs.

`table` reads and writes CSV/XLSX (atomically, formula-like cells neutralised), `packs` names the platforms' sets
of texts, `rows` turns rows into jobs (one request per text) and the batch id, `runner` runs them as saved runs
and builds the output, `lock` keeps one process to a batch, `outfile` writes the command's output as rows finish,
`cli` is `python -m capel_ui batch`. The Batch page is `capel_ui/ui/batch.py`.
"""
