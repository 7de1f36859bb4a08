"""`python -m capel_ui doctor --provider X [--model M]`: the smallest real request for each capability the app
relies on (streaming, seed, prefill/prefix, JSON-schema pattern, grammar tool), and what the vendor accepted, so a
writer with a key settles each open question about a vendor in seconds; the last line says whether the guaranteed
modes hold on this key and model ("Guaranteed on this key and model", the app's own probe of its route) or why not
(the logic: `backends.vendor_check`)."""

from __future__ import annotations

import argparse
from typing import TextIO

from .vocab import EXIT_BACKEND, EXIT_OK, EXIT_USAGE


def add_doctor_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "doctor",
        help="send a hosted vendor the smallest request per capability; print what it took and whether the guarantee "
        "holds on your key",
    )
    p.add_argument("--provider", required=True, help="openai, anthropic, gemini, xai, mistral, deepseek or openrouter")
    p.add_argument("--model", help="the model to ask (default: the provider's first)")
    p.set_defaults(handler=cmd_doctor)


def cmd_doctor(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .backends import BackendError, spec_of
    from .backends.vendor_check import doctor

    try:
        spec = spec_of(args.provider)
        if not spec.keyed:
            err.write(f"capel_ui: error: {spec.label} is not a hosted vendor: doctor asks vendors' APIs.\n")
            return EXIT_USAGE
        model = args.model or spec.default_model
        err.write(f"Asking {spec.label} ({model}) with the smallest request per capability…\n")
        checks = list(doctor(args.provider, args.model))
    except BackendError as exc:
        err.write(f"capel_ui: error: {exc}\n")
        return EXIT_BACKEND
    for check in checks:
        mark = "yes" if check.accepted else "no"
        out.write(f"{check.capability:<22} {mark:<4} {check.said}\n")
    return EXIT_OK if checks and checks[0].accepted else EXIT_BACKEND
