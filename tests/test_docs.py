"""The documents stay true to the code and to each other: the generated parts (the CLI reference, the layer table,
the quality rules) match what scripts/docs.py makes now, every relative link and anchor resolves, and the README
stays a short page that opens with the two commands CI runs."""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path

import pytest

from capel_ui.cli import build_parser
from capel_ui.layers import LAYERS

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("capel_docs_script", ROOT / "scripts" / "docs.py")
assert _spec and _spec.loader
docs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(docs)

FENCE = re.compile(r"^(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def documents(root: Path = ROOT) -> list[Path]:
    """Every Markdown document a reader opens: the repository's top level and docs/."""
    return sorted([*root.glob("*.md"), *(root / "docs").rglob("*.md")])


def prose(path: Path) -> list[str]:
    """The lines of a Markdown file outside its fenced code blocks (a `# comment` in a bash block is no heading)."""
    lines, fenced = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line.strip()):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped (hyphens and underscores stay), spaces to
    hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.replace("`", "").strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: dict[str, int] = {}
    out = set()
    for line in prose(path):
        if m := HEADING.match(line):
            base = slug(m.group(2))
            n = found.get(base, 0)
            found[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return out


def broken_links(paths: list[Path]) -> list[str]:
    """Each relative link among `paths` whose file or anchor does not exist, as `file: target`."""
    broken = []
    for path in paths:
        for line in prose(path):
            for target in LINK.findall(line):
                if re.match(r"^[a-z]+:", target):  # http:, https:, mailto:: not ours to check
                    continue
                file, _, anchor = target.partition("#")
                dest = (path.parent / file).resolve() if file else path
                if not dest.exists() or (anchor and dest.is_file() and anchor not in anchors(dest)):
                    broken.append(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name}: {target}")
    return broken


@pytest.mark.parametrize("relative", [*docs.WHOLE, *docs.SECTIONS])
def test_each_generated_document_matches_the_code(relative: str) -> None:
    on_disk = (ROOT / relative).read_text(encoding="utf-8")
    assert on_disk == docs.expected(relative), f"{relative} is out of date: run `{docs.REGENERATE}`"


def test_the_check_names_a_document_edited_by_hand(tmp_path: Path) -> None:
    for relative in [*docs.WHOLE, *docs.SECTIONS]:
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / relative, tmp_path / relative)
    assert docs.stale(tmp_path) == []
    cli = tmp_path / "docs" / "cli.md"
    cli.write_text(cli.read_text(encoding="utf-8").replace("## generate", "## generate (edited)"), encoding="utf-8")
    layers = tmp_path / "docs" / "architecture.md"
    layers.write_text(layers.read_text(encoding="utf-8").replace("| words |", "| letters |"), encoding="utf-8")
    assert docs.stale(tmp_path) == ["docs/cli.md", "docs/architecture.md"]


def test_the_cli_reference_has_a_section_for_every_command() -> None:
    reference = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    commands = [" ".join(path) for path, _, _ in docs.walk(build_parser())]
    assert {"generate", "history show", "models pull", "bench", "batch", "doctor"} <= set(commands)
    for command in commands:
        assert f"\n## {command}\n" in reference


def test_the_architecture_page_shows_every_layer_lowest_first() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = [f"| {i} | {layer.name} |" for i, layer in enumerate(LAYERS, 1)]
    places = [page.find(row) for row in rows]
    assert -1 not in places and places == sorted(places)


def test_the_readme_opens_with_the_two_commands_ci_runs_and_stays_short() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)\n```", readme, flags=re.S)
    assert blocks[:2] == [
        "bash scripts/setup.sh && .venv/bin/streamlit run app.py",
        "bash scripts/setup.sh --test && .venv/bin/python -m pytest -q",
    ]
    assert blocks[1] in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 150


def test_every_relative_link_and_anchor_in_the_documents_resolves() -> None:
    assert broken_links(documents()) == []


def test_a_link_to_a_missing_file_or_heading_is_found(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# Top\n\n## Verified repair (`capel`, `draft-capel`)\n\n```bash\n# not a heading\n```\n\n"
        "[ok](#verified-repair-capel-draft-capel) [bad](#not-a-heading) [gone](missing.md) [web](https://x.org)\n",
        encoding="utf-8",
    )
    assert broken_links([page]) == ["page.md: #not-a-heading", "page.md: missing.md"]
