"""The local model manager against a scripted Hugging Face Hub on 127.0.0.1 (HF_ENDPOINT): pull with progress,
resume, checksum, full disk, remove, and running what was pulled. Never the internet."""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from capel_ui import local_models
from capel_ui.backends.embedded import smollm2_path
from capel_ui.backends.providers import spec_of
from capel_ui.cli import main
from capel_ui.local_models import BY_NAME, installed
from capel_ui.vocab import EXIT_BACKEND, EXIT_OK
from tests.scripted_hub import ScriptedHub

QWEN = BY_NAME["qwen2.5-1.5b"]
SMALL = os.urandom(256 * 1024)  # any bytes: a pull does not read what it downloads
LARGER = os.urandom(24 * 1024 * 1024)  # more than two of the client's 10 MB read chunks: a cut leaves one on disk


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdin=io.StringIO(""), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_a_pull_downloads_checks_and_lists_the_model(hub: ScriptedHub) -> None:
    hub.serve(QWEN.repo, QWEN.filename, SMALL)
    code, _, err = cli("models", "pull", QWEN.name)
    assert code == EXIT_OK, err
    assert "sha256" in err and "checked" in err
    model = installed()[QWEN.name]
    assert Path(model.path).read_bytes() == SMALL
    code, out, _ = cli("models", "list")
    assert any(line.startswith(QWEN.name) and "installed" in line for line in out.splitlines())


def test_a_download_cut_half_way_is_resumed_from_where_it_stopped(hub: ScriptedHub) -> None:
    hub.serve(QWEN.repo, QWEN.filename, LARGER, cut_first=True)
    code, _, err = cli("models", "pull", QWEN.name)
    if code != EXIT_OK:  # the client gave up on the cut: nothing is offered, and the next pull resumes
        assert QWEN.name not in installed() and "run the same pull again to resume it" in err
        code, _, err = cli("models", "pull", QWEN.name)
    assert code == EXIT_OK, err
    ranges = [r for method, _, r in hub.requests if method == "GET" and r]
    assert ranges and ranges[-1].startswith("bytes=") and ranges[-1] != "bytes=0-"
    assert Path(installed()[QWEN.name].path).read_bytes() == LARGER


def test_a_file_that_does_not_match_the_hubs_checksum_is_deleted_and_never_offered(hub: ScriptedHub) -> None:
    hub.serve(QWEN.repo, QWEN.filename, SMALL, sha256="0" * 64)
    code, _, err = cli("models", "pull", QWEN.name)
    assert code == EXIT_BACKEND and "does not match the Hub's checksum" in err
    assert installed() == {} and spec_of("local").offered() == ()
    assert not list((local_models.models_dir() / QWEN.name).glob("*.gguf"))


def test_a_disk_too_small_for_the_model_is_refused_before_any_download(hub: ScriptedHub, monkeypatch) -> None:
    hub.serve(QWEN.repo, QWEN.filename, SMALL)
    real = shutil.disk_usage

    def nearly_full(path: Any) -> Any:  # the OS's answer on a disk with 100 MB free
        return real(path)._replace(free=100_000_000)

    monkeypatch.setattr(shutil, "disk_usage", nearly_full)
    code, _, err = cli("models", "pull", QWEN.name)
    assert code == EXIT_BACKEND and "not enough free disk for 1.12 GB" in err
    assert hub.requests == []


def test_remove_deletes_a_pulled_model(hub: ScriptedHub) -> None:
    hub.serve(QWEN.repo, QWEN.filename, SMALL)
    assert cli("models", "pull", QWEN.name)[0] == EXIT_OK
    assert cli("models", "remove", QWEN.name)[0] == EXIT_OK
    assert installed() == {} and not (local_models.models_dir() / QWEN.name).exists()


def test_a_model_not_pulled_yet_says_how_to_pull_it(hub: ScriptedHub) -> None:
    code, _, err = cli("generate", "--model", QWEN.name, "--target", "3", "Hi.")
    assert code != EXIT_OK and f"python -m capel_ui models pull {QWEN.name}" in err


@pytest.mark.model
def test_a_pulled_model_writes_a_verified_exact_text_and_is_offered_in_the_pickers(hub: ScriptedHub) -> None:
    small = BY_NAME["smollm2-1.7b"]  # the Hub here serves the embedded model's own file under its name
    hub.serve(small.repo, small.filename, smollm2_path())
    assert cli("models", "pull", small.name)[0] == EXIT_OK
    assert spec_of("local").offered() == (small.name,)
    argv = ["--model", small.name, "--mode", "exact", "--target", "30", "--no-ask-more"]  # the pulled file's run
    code, out, err = cli("generate", *argv, "Describe a harbour.")
    assert code == EXIT_OK, err
    assert "✓ exact · verified · 30/30 English words" in err and out.strip()


# ----- the app ---------------------------------------------------------------------------------------------------


def test_write_offers_the_pull_when_the_embedded_model_cannot_write_the_language(app_test) -> None:
    at = app_test
    assert not [w for w in at.warning if "does not write Chinese" in w.value]
    at.radio(key="w_lang").set_value("zh").run()
    [offer] = [w.value for w in at.warning if "does not write Chinese" in w.value]
    assert "qwen2.5-1.5b" in offer


def test_a_pulled_model_appears_in_writes_picker_and_the_models_page_says_pulled(hub: ScriptedHub, app_test) -> None:
    hub.serve(QWEN.repo, QWEN.filename, SMALL)
    assert cli("models", "pull", QWEN.name)[0] == EXIT_OK
    at = app_test
    at.selectbox(key="provider").set_value("local").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="model_local").options == [QWEN.name]
    at.selectbox(key="provider").set_value("embedded").run()  # Compare offers it beside the sidebar's model
    at.switch_page("app_pages/compare.py").run()
    assert any(QWEN.name in option for option in at.multiselect(key="c_models").options)  # Compare offers it
    at.switch_page("app_pages/models.py").run()
    assert any(QWEN.name in m.value and "✓ pulled" in m.value for m in at.markdown)


@pytest.mark.model
def test_chinese_from_the_embedded_model_is_verified_in_count_but_never_scored_as_good_text() -> None:
    from capel_ui.history import run_warnings, score_line
    from capel_ui.storage import get_engine, list_runs

    code, _, err = cli("generate", "--mode", "exact", "--lang", "zh", "--target", "12", "写一句关于大海的话。")
    assert code == EXIT_OK, err
    [run] = list_runs(get_engine())
    assert run.verified and run.score is None and "score" not in score_line(run)
    [first, *_] = run_warnings(run)
    assert first.kind == "language" and "does not write Chinese" in first.message
