"""``/model``: a session's own model, chosen by the user and kept across resumes.

A session's choice (``session_update {model, chosen: true}``) beats ``MTTUI_MODEL``
and ``config.toml``; only the ``--model`` flag overrides it, for that process.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from mttui.session.errors import MttuiError
from mttui.session.writer import SessionWriter

if TYPE_CHECKING:
    from mttui.config import Settings
    from mttui.graph.runner import Runner

_NAME = re.compile(r"^[^\s\x00-\x1f\x7f-\x9f]{1,200}$")


class ModelChoiceError(MttuiError):
    """A model name that cannot be used, or a switch at the wrong moment (one line)."""


def session_settings(settings: Settings, chosen_model: str | None) -> Settings:
    """The settings a reopened session runs with: its chosen model, unless ``--model``."""
    if chosen_model and not settings.model_from_flag and chosen_model != settings.model:
        return settings.with_overrides(model=chosen_model)
    return settings


def choose_model(writer: SessionWriter, runner: Runner, settings: Settings, name: str
                 ) -> Settings:
    """Switch the session to ``name`` from the next run on (durable: ``session_update``);
    the new settings. Raises :class:`ModelChoiceError` for a bad name or during a run."""
    name = name.strip()
    if not _NAME.match(name):
        raise ModelChoiceError(f"invalid model name {name!r}: one word, at most 200 characters, "
                               "no control characters")
    if runner.busy:
        raise ModelChoiceError("cannot switch the model while a run is active")
    new = settings.with_overrides(model=name, model_from_flag=False)
    writer.append("session_update", model=name, chosen=True)
    runner.update_settings(new)
    return new
