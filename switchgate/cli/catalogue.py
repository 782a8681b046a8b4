"""`switchgate catalogue list|show|import`: the shipped model catalogue."""

import argparse

from switchgate.catalogue.entries import CatalogueModel, shipped_catalogue
from switchgate.catalogue.importer import import_models
from switchgate.cli.ops import Ops
from switchgate.cli.progress import Progress


def add_catalogue_commands(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    catalogue = sub.add_parser(
        "catalogue", help="the shipped model catalogue: list, show, import models with prices"
    )
    csub = catalogue.add_subparsers(dest="action", required=True)
    for verb, text in (("list", "list catalogue models"), ("import", "import models and prices")):
        p = csub.add_parser(verb, help=text)
        p.add_argument("--provider", help="vendor: openai, anthropic, google, deepseek, ...")
        p.add_argument("--models", metavar="GLOB", help="id pattern(s), e.g. 'claude-*,gpt-5*'")
        p.add_argument("--kind", help="chat, embedding, image, tts, stt")
    csub.choices["import"].add_argument(
        "--channel", help="the channel to add the models to (default: every matching channel)"
    )
    csub.add_parser("show", help="one model in full").add_argument("model")


def _limits(model: CatalogueModel) -> str:
    context = f"{model.context_window:,}" if model.context_window else "-"
    output = f"{model.max_output:,}" if model.max_output else "-"
    return f"ctx {context}\tout {output}"


async def run_catalogue(ops: Ops, args: argparse.Namespace) -> None:
    catalogue = shipped_catalogue()
    if args.action == "show":
        model = catalogue.get(args.model)
        vendor = catalogue.vendors[model.vendor]
        print(f"{model.id}  ({model.kind}, {model.vendor}; catalogue of {catalogue.as_of})")
        print(f"  channel kind   {model.channel_kind} (e.g. {vendor.base_url})")
        print(f"  upstream id    {model.upstream_id}")
        print(f"  context window {model.context_window or 'unknown'}")
        print(f"  max output     {model.max_output or 'unknown'}")
        print(f"  capabilities   {', '.join(sorted(model.capabilities)) or '-'}")
        print(f"  price          {model.describe_price()}")
        if model.note:
            print(f"  note           {model.note}")
        return
    models = catalogue.select(vendor=args.provider, pattern=args.models, kind=args.kind)
    if args.action == "list":
        print(f"# catalogue of {catalogue.as_of}: {len(models)} model(s)")
        for model in models:
            print(
                f"{model.id}\t{model.vendor}\t{model.kind}\t{_limits(model)}"
                f"\t{model.describe_price()}"
            )
        return
    bar = Progress(len(models), "importing models")
    try:
        async with ops.db.begin() as conn:
            report = await import_models(
                conn, catalogue, models, channel=args.channel, on_model=bar.advance
            )
    finally:
        bar.close()
    for line in report.lines(catalogue):
        print(line)
