"""The texts the offline model writes (kept apart from the model class, no LangChain)."""

from __future__ import annotations

from typing import Any

from ..compression.prompt import COMPRESS_MARKER

OFFLINE_HELP = """Offline model active: no network, deterministic answers. Triggers:
  !COMMAND               run a shell command (asks for approval)
  /read PATH             read a file
  /ls [PATH]             list a directory
  /grep PATTERN          search file contents (regex)
  /write PATH TEXT       write a file (TEXT = rest of the message)
  /edit PATH OLD => NEW  replace OLD by NEW in a file (must be unique)
Several trigger lines in one message become parallel tool calls.
Set OPENAI_API_KEY / OPENAI_BASE_URL (or --provider openai) for a real model."""


def _text(message: Any) -> str:
    content = getattr(message, "content", "")
    return content if isinstance(content, str) else str(content)


def _first_line(text: str, limit: int = 100) -> str:
    for line in text.splitlines():
        if line.strip():
            line = line.strip()
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return "(empty)"


def echo_answer(text: str, *, has_tools: bool) -> str:
    """A deterministic, Markdown-rich answer to an ordinary message."""
    words = text.split()
    lines = [
        "## Offline answer",
        "",
        f"You wrote **{len(words)} word{'' if len(words) == 1 else 's'}** "
        f"({len(text)} character{'' if len(text) == 1 else 's'}). The offline model does "
        "not understand them; it repeats them at the end of this answer.",
        "",
        "Things you can try here:",
        "",
        "- `!ls -la` runs a shell command (you will be asked to approve it)",
        "- `/read README.md` reads a file, `/ls` lists the project",
        "- `/grep TODO` searches the project, `/edit FILE OLD => NEW` edits a file",
        "",
        "```text",
        *(text.splitlines()[:8] or ["(empty message)"]),
        "```",
    ]
    if not has_tools:
        lines += ["", "_Tools are not available in this call._"]
    return "\n".join(lines)


def summarize_results(convo: list[Any]) -> str:
    """A short summary of the tool results that follow the last assistant message."""
    tail: list[Any] = []
    for message in reversed(convo):
        if getattr(message, "type", "") != "tool":
            break
        tail.append(message)
    tail.reverse()
    lines = [f"Ran {len(tail)} tool call{'s' if len(tail) != 1 else ''}:", ""]
    for message in tail:
        status = getattr(message, "status", "success")
        body = _text(message)
        state = status
        low = body.lower()
        if low.startswith("denied"):
            state = "denied"
        elif low.startswith("cancelled") or low.startswith("interrupted"):
            state = low.split(":", 1)[0]
        size = len(body.splitlines())
        lines.append(
            f"- `{getattr(message, 'name', None) or 'tool'}` — {state}, "
            f"{size} line{'s' if size != 1 else ''}: {_first_line(body, 80)}"
        )
    return "\n".join(lines)


def snapshot(convo: list[Any]) -> str:
    """A ``<compressed_snapshot>`` built mechanically from the messages it summarizes."""
    humans = [m for m in convo if getattr(m, "type", "") == "human"]
    previous = [_text(m) for m in humans if "<compressed_snapshot>" in _text(m)]
    users = [
        _first_line(_text(m), 120)
        for m in humans
        if COMPRESS_MARKER not in _text(m) and "<compressed_snapshot>" not in _text(m)
    ]
    tools = [m for m in convo if getattr(m, "type", "") == "tool"]
    files: list[str] = []
    for m in convo:
        for call in getattr(m, "tool_calls", None) or []:
            path = (call.get("args") or {}).get("path")
            if path and call.get("name") in ("read_file", "write_file", "edit_file"):
                entry = f"{call['name']} {path}"
                if entry not in files:
                    files.append(entry)

    def bullets(items: list[str], empty: str) -> str:
        return "\n".join(f"- {x}" for x in items) if items else f"- {empty}"

    goal = users[-1] if users else "(no user request yet)"
    knowledge = [f"earlier request: {u}" for u in users[:-1][-8:]]
    for prev in previous[-1:]:  # summaries chain: carry the last one forward
        carried = _section(prev, "current_goal") + _section(prev, "key_knowledge")
        knowledge = [f"from the earlier snapshot: {c}" for c in carried[:8]] + knowledge
    results = [
        f"{getattr(m, 'name', None) or 'tool'}: {_first_line(_text(m), 80)}" for m in tools[-6:]
    ]
    return "\n".join(
        [
            "<compressed_snapshot>",
            f"<current_goal>\n- {goal}\n</current_goal>",
            f"<key_knowledge>\n{bullets(knowledge, 'nothing recorded')}\n</key_knowledge>",
            f"<file_state>\n{bullets(files[-12:], 'no files touched')}\n</file_state>",
            f"<decisions>\n- {len(users)} user messages and {len(tools)} tool results "
            "summarized\n</decisions>",
            f"<open_tasks>\n- continue with: {goal}\n</open_tasks>",
            f"<important_tool_results>\n{bullets(results, 'none')}\n</important_tool_results>",
            "</compressed_snapshot>",
        ]
    )


def _section(snapshot_text: str, name: str) -> list[str]:
    """The bullet lines of one section of an earlier snapshot."""
    start, end = f"<{name}>", f"</{name}>"
    if start not in snapshot_text or end not in snapshot_text:
        return []
    body = snapshot_text.split(start, 1)[1].split(end, 1)[0]
    items = [
        line.strip()[2:].strip() for line in body.splitlines() if line.strip().startswith("- ")
    ]
    return [i.removeprefix("from the earlier snapshot: ") for i in items if i]
