"""Option values that start with "-". A Claude Code project folder is the working directory
with every non-alphanumeric character turned into "-" (`/home/me/shop` → `-home-me-shop`),
so `--project -home-me-shop` looks to argparse like two options and fails with "expected
one argument". The command line is read as `--project=-home-me-shop` instead, and an error
that still names such an option says how to write it."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import NoReturn

# Options whose value may be a Claude Code project folder name.
DASH_VALUE_OPTIONS = ("--project",)


def attach_dash_values(argv: Sequence[str]) -> list[str]:
    """`--project -x` → `--project=-x` when `-x` is no option of ours (not `--…`, not `-h`)."""
    out: list[str] = []
    for token in argv:
        value_of_previous = out and out[-1] in DASH_VALUE_OPTIONS
        if value_of_previous and _dash_value(token):
            out[-1] = f"{out[-1]}={token}"
        else:
            out.append(token)
    return out


def _dash_value(token: str) -> bool:
    return token.startswith("-") and not token.startswith("--") and token not in ("-", "-h")


class Parser(argparse.ArgumentParser):
    """argparse, whose "expected one argument" for `--project` shows the `=` form."""

    def error(self, message: str) -> NoReturn:
        if "expected one argument" in message and any(o in message for o in DASH_VALUE_OPTIONS):
            message += " (a value that starts with '-' goes after '=': --project=-home-me-shop)"
        super().error(message)
