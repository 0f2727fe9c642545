"""Worker failures are shown, never lost (workers run with ``exit_on_error=False``)."""

from __future__ import annotations

from textual.dom import DOMNode
from textual.worker import Worker, WorkerState

from mttui.session.errors import MttuiError


def describe_error(error: BaseException | None) -> str:
    if error is None:
        return "unknown error"
    if isinstance(error, MttuiError):
        return str(error)
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}".rstrip(": ")


def report_worker_error(node: DOMNode, event: Worker.StateChanged) -> bool:
    """Notify the user when a worker failed; returns whether it did."""
    if event.state != WorkerState.ERROR:
        return False
    worker = event.worker
    node.app.notify(describe_error(worker.error), title=f"{worker.name or 'task'} failed",
                    severity="error", timeout=8)
    return True
