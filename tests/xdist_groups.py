"""pytest-xdist's `--dist loadgroup` on pytest 9.2: the group put back in the node id (tests/conftest.py calls
`name_the_group` for every test; `-p tests.xdist_groups` does the same for any other test run)."""

from __future__ import annotations

import pytest


def name_the_group(config: pytest.Config, item: pytest.Item) -> None:
    """Put the item's xdist group at the end of its node id, as pytest-xdist's worker does with `--dist loadgroup`:
    its controller schedules by that suffix. pytest 9.2 keeps a node's id in `_id` (a NodeId); xdist 3.8 still
    writes `_nodeid`, which nothing reads any more, so without this every group was silently ignored (the
    PostgreSQL cluster started in each worker, the word-list grammars compiled in each)."""
    if not getattr(config.option, "loadgroup", False):  # not a pytest-xdist worker under `--dist loadgroup`
        return
    marks = item.iter_markers("xdist_group")
    groups = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in marks})
    if groups and hasattr(item, "_id") and "@" not in item.nodeid.rpartition("]")[2]:
        from _pytest.nodeid import NodeId

        item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(groups)}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        name_the_group(config, item)
