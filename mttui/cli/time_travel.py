"""The handlers of the time-travel commands (each module imported only when used)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from mttui.session.service import SessionService


def handler(command: str) -> Callable[[argparse.Namespace, SessionService], int]:
    if command == "checkpoints":
        from .checkpoints import cmd_checkpoints

        return cmd_checkpoints
    if command == "rewind":
        from .rewind import cmd_rewind

        return cmd_rewind
    if command == "fork":
        from .fork import cmd_fork

        return cmd_fork
    from .ledger import cmd_ledger

    return cmd_ledger
