"""DeepSeek: chat completions with log-probabilities and chat prefix completion (beta), no grammar."""

from __future__ import annotations

from ..base import Capabilities
from .common import http_api
from .spec import ProviderSpec

SPEC = ProviderSpec(
    "deepseek",
    "DeepSeek",
    lambda args: http_api(args, args.base_url or args.spec.base_url),
    base_url="https://api.deepseek.com",
    key_env="DEEPSEEK_API_KEY",
    keyed=True,
    model_input="list",
    models=("deepseek-chat", "deepseek-reasoner"),
    model_caps={"deepseek-reasoner": Capabilities(reasoning=True, ignores_temperature=True)},
    # logprobs for the fluency score; chat prefix completion (beta) for repair
    default_caps=Capabilities(logprobs=True, prefill="prefix", prefill_path="/beta"),
    prefixes=("deepseek",),
    note="DeepSeek's API takes no grammar: CAPEL and baseline only.",
)
