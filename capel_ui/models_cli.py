"""`python -m capel_ui models list|pull NAME|remove NAME`: the local model manager on the command line (the
logic is `local_models`; the Models page draws the same)."""

from __future__ import annotations

import argparse
from typing import TextIO

from .redact import redact
from .vocab import EXIT_BACKEND, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE


def add_models_parser(sub: argparse._SubParsersAction) -> None:
    from .local_models import BY_NAME

    p = sub.add_parser("models", help="list, pull or remove local GGUF models (downloaded from the Hugging Face Hub)")
    actions = p.add_subparsers(dest="action", required=True, parser_class=type(p))
    listing = actions.add_parser("list", help="the catalogue, and what is installed; or a hosted vendor's models")
    listing.add_argument(
        "--provider",
        help="a hosted vendor (openai, anthropic, gemini, xai, mistral, deepseek, openrouter): the "
        "models its /models endpoint lists for your key, else the ones the app declares",
    )
    pull = actions.add_parser("pull", help="download a model of the catalogue (resumes; checks its sha256)")
    pull.add_argument("name", choices=list(BY_NAME))
    rm = actions.add_parser("remove", help="delete a pulled model")
    rm.add_argument("name", choices=list(BY_NAME))
    actions.add_parser(
        "running",
        help="the models kept loaded between commands (`generate` leaves its model loaded; it stops by itself "
        "after 5 minutes with no request)",
    )
    actions.add_parser("stop", help="stop the models kept loaded between commands")
    p.set_defaults(handler=cmd_models)


def cmd_models(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from . import local_models as lm

    if args.action in ("running", "stop"):
        return _resident(args.action == "stop", out, err)
    try:
        if args.action == "list" and getattr(args, "provider", None):
            return _vendor_list(args.provider, out, err)
        if args.action == "list":
            for row in lm.rows():
                mark = "installed" if row["installed"] else "-"
                out.write(
                    f"{row['name']:<14} {mark:<10} {row['size_gb']:>5.2f} GB  {row['languages']:<7} "
                    f"{row['licence']:<11} {row['about']}\n"
                )
            out.write(f"models folder: {lm.models_dir()}\n")
            return EXIT_OK
        if args.action == "pull":
            from tqdm import tqdm  # huggingface_hub's own bar stays hidden unless its logging says otherwise

            model = lm.pull(args.name, tqdm_class=tqdm, progress=lambda line: err.write(f"{line}\n"))
            err.write(f"pulled {model.name}: {model.path} (sha256 {model.sha256[:12]}… checked)\n")
            err.write(f'use it: python -m capel_ui generate --model {model.name} --mode exact --target 30 "…"\n')
            return EXIT_OK
        removed = lm.remove(args.name)
        err.write(f"removed {args.name}\n" if removed else f"{args.name} was not installed\n")
        return EXIT_OK if removed else EXIT_USAGE
    except lm.PullInterrupted as exc:
        err.write(f"interrupted: {exc}\n")
        return exc.exit_code
    except lm.ModelError as exc:  # one line: what happened and what to do; the code from the failure table
        err.write(f"capel_ui: error: {redact(str(exc))}\n")  # an HF_ENDPOINT mirror's password masked
        return exc.exit_code
    except KeyboardInterrupt:  # while the checksum is read, or the list is printed: nothing half done is offered
        err.write("interrupted: nothing was changed; a partial download is kept for the next pull\n")
        return EXIT_INTERRUPTED


def _vendor_list(provider: str, out: TextIO, err: TextIO) -> int:
    """A hosted vendor's models: asked of its /models endpoint when a key is set (a new id needs no release),
    else the ids the app declares, with their limits and where they were read."""
    from .backends import BackendError, resolve_key, spec_of
    from .backends.vendor_check import vendor_models

    try:
        spec = spec_of(provider)
        if not spec.keyed:
            err.write(f"capel_ui: error: {spec.label} is not a hosted vendor; use `models list` alone.\n")
            return EXIT_USAGE
        if resolve_key(provider) is None:
            err.write(
                f"No {spec.key_env} set: the models the app declares ({spec.models_source or 'its provider file'}).\n"
            )
            ids, source = list(spec.models), "declared"
        else:
            ids, source = vendor_models(provider), "listed"
    except BackendError as exc:
        err.write(f"capel_ui: error: {exc}\n")
        return EXIT_BACKEND
    for model in ids:
        limit = spec.limit(model)
        known = "declared" if model in spec.models or limit else "-"
        limits = f"output {limit.output:,}" if limit and limit.output else ""
        limits += f"{'  ' if limits else ''}context {limit.context:,}" if limit and limit.context else ""
        out.write(f"{model:<44} {known:<9} {limits}\n".rstrip() + "\n")
    err.write(f"{len(ids)} models {source} for {spec.label}.\n")
    return EXIT_OK


def _resident(stop: bool, out: TextIO, err: TextIO) -> int:
    """The resident model servers (backends/resident.py) and the warm processes that start commands
    (forkserver.py): listed with their process and how long they stay, or stopped."""
    import time

    from . import keep
    from .backends import resident

    found = resident.running()
    for place, record in found:
        if stop:
            resident.stop(place, record)
            continue
        left = max(0.0, keep.keep_alive() - (time.time() - place.last_touched()))
        threads = f"{record.threads} thread{'s' if record.threads != 1 else ''}"
        out.write(f"{record.model_file:<40} pid {record.pid:<8} {record.slots} slots x {record.context} tokens, ")
        out.write(f"{threads}  ")
        out.write(f"stays at least {left / 60:.0f} more min\n")
    what = "stopped" if stop else "kept loaded"
    err.write(f"{len(found)} model server{'s' if len(found) != 1 else ''} {what}.\n")
    warm = keep.warm_processes()
    for process in warm:
        if stop:
            keep.stop(process.pid)
            continue
        started = f"started {process.started} command{'s' if process.started != 1 else ''}"
        out.write(f"{'warm process (commands start with the app imported)':<40} pid {process.pid:<8} {started}\n")
    if warm:
        err.write(f"{len(warm)} warm process{'es' if len(warm) != 1 else ''} {'stopped' if stop else 'waiting'}.\n")
    return EXIT_OK
