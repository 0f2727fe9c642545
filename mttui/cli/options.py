"""Settings from the command line's flags (flag > environment > config.toml > default)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mttui.config import Settings

FLAGS = ("provider", "model", "base_url", "approval", "sandbox")


def settings_from(args: argparse.Namespace, **forced: str) -> Settings:
    """The settings of this process; ``forced`` wins over every source (the demo)."""
    from mttui.config import load_settings

    flags: dict[str, str | None] = {k: getattr(args, k, None) for k in FLAGS}
    flags.update(forced)
    return load_settings(flags)
