"""Session references (cli.md): a full id, a unique prefix of >= 4 characters, or ``last``."""

from __future__ import annotations

from collections.abc import Callable

from .errors import RefTooShort, SessionNotFound
from .models import SessionInfo

MIN_PREFIX = 4

Lookup = Callable[[str], list[SessionInfo]]


def resolve_ref(
    ref: str,
    *,
    newest: Callable[[], SessionInfo | None],
    in_project: Lookup,
    everywhere: Lookup,
) -> SessionInfo:
    """Resolve ``ref``: ``last`` is the project's most recently updated session; an
    id or prefix is looked up in the current project first, then in all projects.

    Raises ``SessionNotFound`` with a one-line message when nothing or several match.
    """
    ref = ref.strip()
    if ref.lower() == "last":
        info = newest()
        if info is None:
            raise SessionNotFound("no session in this project yet")
        return info
    if len(ref) < MIN_PREFIX:
        raise RefTooShort(
            f"session reference {ref!r} is too short: give 'last', a full id or "
            f"at least {MIN_PREFIX} characters of one"
        )
    prefix = ref.lower()
    for lookup in (in_project, everywhere):
        found = lookup(prefix)
        exact = [s for s in found if s.id == prefix]
        if exact:
            return exact[0]
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            shown = ", ".join(s.id for s in found[:5])
            raise SessionNotFound(
                f"session prefix {ref!r} is ambiguous ({shown}{', …' if len(found) > 5 else ''}); "
                "give more characters"
            )
    raise SessionNotFound(f"no session matches {ref!r}")
