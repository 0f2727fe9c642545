"""The browser's preview of the highlighted session: facts, resume verdict, last messages."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from mttui.session.models import MessageRow, SessionInfo
from mttui.session.times import relative_time

from .text import literal, short_path

if TYPE_CHECKING:
    from mttui.session.resume.verdict import PreviewVerdict

MODE_STYLE = {"execution": "bold green", "transcript": "bold yellow", "refused": "bold red"}
ROLE_LABEL = {"user": ("You", "bold cyan"), "assistant": ("Assistant", "bold magenta"),
              "tool": ("Tool", "bold blue"), "system": ("System", "dim")}


class PreviewPane(VerticalScroll, can_focus=False):
    DEFAULT_CSS = """
    PreviewPane { background: $surface; border-left: vkey $panel-lighten-1; padding: 0 1 0 2; }
    PreviewPane > Static { width: 1fr; }
    """

    def __init__(self, clock: Callable[[], datetime], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.clock = clock
        self.session_id: str | None = None
        self.show_project = False  # the all-projects view names each session's project

    def compose(self) -> ComposeResult:
        yield Static(Text("No session selected.", style="dim"), id="preview-body")

    def show_empty(self, text: str) -> None:
        self.session_id = None
        self.query_one("#preview-body", Static).update(Text(text, style="dim"))

    def show_info(self, info: SessionInfo) -> None:
        """Facts first (instant); messages and verdict follow from a worker."""
        self.session_id = info.id
        self.query_one("#preview-body", Static).update(
            Group(*self._head(info), Text(""), Text("loading…", style="dim")))

    def show(self, info: SessionInfo, messages: list[MessageRow], verdict: PreviewVerdict) -> None:
        self.session_id = info.id
        parts = [*self._head(info), Text(""), *self._verdict(verdict), Text(""),
                 *self._messages(messages, info)]
        self.query_one("#preview-body", Static).update(Group(*parts))
        self.scroll_home(animate=False)

    # -- parts ----------------------------------------------------------------
    def _head(self, info: SessionInfo) -> list[RenderableType]:
        now = self.clock()
        title = Text(literal(info.title or "(untitled)"), style="bold")
        facts = Table.grid(padding=(0, 1))
        facts.add_column(style="dim", no_wrap=True)
        facts.add_column()
        facts.add_row("id", info.id)
        if info.project and self.show_project:
            facts.add_row("project", short_path(Path(info.project)))
        facts.add_row("model", " · ".join(x for x in (info.provider, info.model) if x) or "—")
        n = info.compression_count
        facts.add_row("messages", f"{info.message_count:,}"
                      + (f"  ({n} compression{'s' if n != 1 else ''})" if n else ""))
        facts.add_row("updated", relative_time(info.updated_at, now))
        facts.add_row("created", relative_time(info.created_at, now))
        if info.fork:  # a fork: where it comes from
            parent = literal(info.parent_title or str(info.fork.get("session_id")))
            facts.add_row("⑂ fork of", f"{parent} at #{info.fork.get('seq')}")
        if info.fork_incomplete:
            facts.add_row("⑂ incomplete", "its copy was interrupted: `mttui fork "
                          f"{info.id} --finish` makes it again, `mttui delete {info.id}` "
                          "removes it")
        out: list[RenderableType] = [title, facts]
        for badge, words in info.status.describe():
            out.append(Text.assemble((badge + " ", "bold yellow"), words))
        return out

    def _verdict(self, verdict: PreviewVerdict) -> list[RenderableType]:
        line = Text("Resume  ", style="bold")
        if verdict.mode == "unchecked":
            line.append("not checked", style="dim")
        else:
            line.append(verdict.mode, style=MODE_STYLE.get(verdict.mode, ""))
        out: list[RenderableType] = [line]
        if verdict.refusal:
            out.append(Text.assemble(("  ✗ ", "red"), (verdict.refusal.get("code", ""), "red")))
            out.append(Padding(Text(literal(verdict.refusal.get("message", ""))), (0, 0, 0, 4)))
        for w in verdict.warnings:
            out.append(Text.assemble(("  ⚠ ", "yellow"), (str(w.get("code", "")), "yellow")))
            if w.get("message"):
                out.append(Padding(Text(literal(str(w["message"]))), (0, 0, 0, 4)))
        if not verdict.warnings and not verdict.refusal and verdict.mode != "unchecked":
            out.append(Text("  no warnings", style="dim"))
        if verdict.note:
            out.append(Text("  " + verdict.note, style="dim"))
        return out

    def _messages(self, rows: list[MessageRow], info: SessionInfo) -> list[RenderableType]:
        if not rows:
            return [Text("No messages yet.", style="dim")]
        shown = len(rows)
        out: list[RenderableType] = [
            Text(f"Last {shown} of {info.message_count:,} messages", style="bold")]
        for row in rows:
            label, style = ROLE_LABEL.get(row.role, (row.role, "dim"))
            body = row.content.strip()
            if row.role == "assistant" and not body and row.tool_calls:
                names = ", ".join(str(c.get("name", "")) for c in row.tool_calls)
                body = f"→ {names}"
            if row.role == "tool":
                label = f"Tool {row.name or ''}".strip()
            lines = literal(body).splitlines() or [""]
            text = "\n".join(lines[:3]) + ("\n…" if len(lines) > 3 else "")
            out.append(Text(label, style=style))
            out.append(Padding(Text(text[:400], overflow="fold"), (0, 0, 0, 2)))
        return out
