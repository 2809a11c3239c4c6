"""`python -m axiom token`: print the API token (made in the data directory if missing)."""

from __future__ import annotations

import argparse

from axiom.settings import Settings
from axiom.store.api_token import api_token, api_token_path


def cmd_token(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    if args.path:
        if settings.auth_token:
            print("AXIOM_AUTH_TOKEN is set: the token comes from the environment, not a file")
            return 1
        api_token(settings)
        print(api_token_path(settings.data_dir))
        return 0
    print(api_token(settings))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "token",
        help="print the token API writes need (Authorization: Bearer <token>)",
        description="Prints AXIOM_AUTH_TOKEN when it is set, else the token stored in the"
        " data directory (created with mode 0600 on first use).",
    )
    p.add_argument("--path", action="store_true", help="print the token file's path instead")
    p.set_defaults(func=cmd_token)
