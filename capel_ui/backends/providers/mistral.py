"""Mistral, whose chat completions API is OpenAI-compatible and continues a prefilled answer.

A last assistant message with `"prefix": true` is continued (as DeepSeek's beta does), so a broken countdown is
repaired from its verified prefix; no grammar or documented string `pattern`: CAPEL with repair, and baseline."""

from __future__ import annotations

from ..base import Capabilities
from .common import http_api
from .spec import ProviderSpec

SPEC = ProviderSpec(
    "mistral",
    "Mistral",
    lambda args: http_api(args, args.spec.address(args.base_url)),
    base_url="https://api.mistral.ai/v1",
    base_url_env="MISTRAL_BASE_URL",
    key_env="MISTRAL_API_KEY",
    keyed=True,
    model_input="list",
    models=("mistral-large-latest", "mistral-medium-latest", "mistral-small-latest"),
    default_caps=Capabilities(prefill="prefix"),
    prefixes=("mistral-", "magistral-", "ministral-", "open-mistral-"),
    note="Mistral: CAPEL (repaired by continuing its verified prefix) and baseline.",
)
