"""The parent of a forked session, for the browser's preview (called from its worker)."""

from __future__ import annotations

from mttui.session.errors import MttuiError
from mttui.session.models import SessionInfo
from mttui.session.plain import replace
from mttui.session.service import SessionService


def with_parent(service: SessionService, info: SessionInfo) -> SessionInfo:
    """``info`` with ``parent_title`` set when it is a fork (its parent may be gone)."""
    fork = info.forked_from()
    if not fork:
        return info
    try:
        parent = service.get(str(fork.get("session_id")))
    except MttuiError:
        return replace(info, fork=fork, parent_title="(deleted)")
    return replace(info, fork=fork, parent_title=parent.title or "(untitled)")
