"""Sample sessions for ``mttui demo`` (no Textual here).

The sessions are made by running the offline model through the real runtime
(``SessionHandle``, LangGraph with its SQLite checkpoints), so each one has the
checkpoint a real session has and opens without a warning, except for what it
is meant to show: an approval that waits, a tool call interrupted by a crash,
a queue, a damaged log line. The long session's 2 000 messages are written as
records and its thread is seeded with the model's view, as a fork is.
Running it twice adds nothing.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mttui.config import Settings
from mttui.core.drive import drive
from mttui.core.handle import ApprovalAnswer, SessionHandle
from mttui.graph.events import ApprovalRequested, Emit, RunEvent
from mttui.graph.messages import arguments_sha256
from mttui.session.records import new_id
from mttui.session.service import SessionService
from mttui.session.transcript import fold

MARKER = "demo-sessions.json"
LONG_MESSAGES = 2000
SAMPLE_FILES = {
    "README.md": "# calc\n\nA tiny calculator used by the mttui demo.\n",
    "src/calc.py": "def add(a, b):\n    return a + b\n\n\ndef div(a, b):\n    return a / b\n",
    "tests/test_calc.py": "from src.calc import add, div\n\n\ndef test_add():\n"
                          "    assert add(2, 3) == 5\n\n\ndef test_div():\n"
                          "    assert div(6, 3) == 2\n",
}
TOPICS = ["the session index", "keyset paging", "FTS5 search", "the JSONL writer",
          "file locking", "resume planning", "history compression", "the approval node",
          "tool journaling", "the status bar"]


def build_demo(home: Path, project: Path) -> list[str]:
    """Fill ``home`` with demo sessions of ``project``; returns their ids (idempotent)."""
    project.mkdir(parents=True, exist_ok=True)
    if not any(project.iterdir()):
        for name, text in SAMPLE_FILES.items():
            path = project / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    service = SessionService(home, project)
    marker = Path(home) / MARKER
    if marker.exists():
        ids = json.loads(marker.read_text(encoding="utf-8"))
        if _all_exist(service, ids):
            return list(ids)
    settings = Settings(provider="offline", model="offline", approval="ask")
    long_id = _long_session(service)
    _seed_long(service, settings, long_id)
    ids = [
        long_id,
        _chinese_session(service, settings),
        _queued_session(service, settings),
        _interrupted_session(service, settings),
        _corrupt_session(service, settings),
        _approval_session(service, settings),
    ]
    marker.write_text(json.dumps(ids), encoding="utf-8")
    service.catch_up()
    return ids


def _all_exist(service: SessionService, ids: list[str]) -> bool:
    from mttui.session.errors import MttuiError

    try:
        for sid in ids:
            service.get(sid)
    except MttuiError:
        return False
    return True


def _msg(role: str, content: str, **extra: Any) -> tuple[str, dict[str, Any]]:
    message = {"id": new_id("msg"), "role": role, "content": content, "status": "sent", **extra}
    return "transcript_message", {"message": message}


def _turn(n: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """Four messages: a question, a tool call, its result, an answer."""
    topic = TOPICS[n % len(TOPICS)]
    call = f"call_{n}"
    yield _msg("user", f"Step {n}: look at {topic} and tell me what to improve.")
    yield _msg("assistant", "", tool_calls=[{"id": call, "name": "search_files",
                                            "args": {"pattern": topic.split()[-1]}}])
    yield _msg("tool", f"src/{topic.split()[-1]}.py:{10 + n % 90}: "
                       f"# TODO revisit {topic}", tool_call_id=call, name="search_files")
    yield _msg("assistant", f"**{topic.capitalize()}** (step {n}) looks fine. Two ideas:\n\n"
                            f"- keep `{topic.split()[-1]}` free of I/O in the hot path\n"
                            f"- add a test for the empty case\n")


def _long_session(service: SessionService) -> str:
    with service.create_session(provider="offline", model="offline",
                                title="Refactor the storage layer (long session)") as w:
        batch: list[tuple[str, dict[str, Any]]] = []
        ids: list[str] = []
        for n in range(1, LONG_MESSAGES // 4 + 1):
            for kind, fields in _turn(n):
                batch.append((kind, fields))
                ids.append(fields["message"]["id"])
            if n == 375:  # 1 500 messages in: an automatic compression
                batch.append(("compression", {
                    "summary": "<compressed_snapshot>\n## Current goal\nRefactor the storage "
                               "layer step by step.\n\n## Key knowledge\n- the index is derived "
                               "from the logs\n- pages are keyset, never OFFSET\n\n## Open tasks"
                               "\n- tests for the empty case\n</compressed_snapshot>",
                    "removed_count": 1400, "kept_count": 100, "kept_message_ids": ids[-100:],
                    "trigger": "auto", "tokens_before": 131_000, "tokens_after": 9_400}))
            if len(batch) >= 200:
                w.append_many(batch)
                batch = []
        if batch:
            w.append_many(batch)
        return w.session_id


def _seed_long(service: SessionService, settings: Settings, session_id: str) -> None:
    """Give the long session the checkpoint a run would have left: the model's view
    (the compression summary and the messages kept after it), as a fork seeds one."""
    from mttui.graph.seed import seed_thread, view_messages

    records, _ = service.records(session_id)
    summary, view = fold(records).model_view()
    writer = service.open_session(service.get(session_id).path)
    try:
        seed_thread(writer, settings, project=service.project,
                    checkpoints_path=service.checkpoints_path(),
                    messages=view_messages(summary, list(view)), thread_id=writer.thread_id)
    finally:
        writer.close()


def _leave_waiting(request: ApprovalRequested) -> ApprovalAnswer | None:
    return None  # the approval waits: it is asked when the session is opened


def _quiet(event: RunEvent) -> None:
    """The runs of the demo are not shown while it is built."""


def _session(service: SessionService, settings: Settings, title: str,
             texts: list[str]) -> SessionHandle:
    """A new session with ``title`` whose turns ``texts`` ran through the offline model."""
    writer = service.create_session(provider=settings.provider, model=settings.model,
                                    title=title)
    handle = SessionHandle(service, settings, writer, fresh=True)
    try:
        for text in texts:
            drive(handle, handle.run(text), emit=_quiet, ask=_leave_waiting)
    except BaseException:
        handle.close()
        raise
    return handle


def _chinese_session(service: SessionService, settings: Settings) -> str:
    handle = _session(service, settings, "重构会话存储：快速分页与全文搜索", [
        "请解释一下为什么会话列表要用键集分页，而不是 OFFSET？",
        "那中文搜索呢？两个字的查询，例如“快速”，能找到吗？",
    ])
    handle.close()
    return handle.session_id


def _queued_session(service: SessionService, settings: Settings) -> str:
    handle = _session(service, settings, "Write the release notes",
                      ["Draft release notes for version 0.1."])
    try:
        for text in ("Also mention the offline model.", "Then shorten it to five lines."):
            handle.pending.add(text)  # waiting in the lane until the user resumes the queue
        return handle.session_id
    finally:
        handle.close()


class _ProcessDied(BaseException):
    """The demo's stand-in for a process killed while its tool runs (no handler of
    the runtime catches it, so nothing is written after it, as after a SIGKILL)."""


def _interrupted_session(service: SessionService, settings: Settings) -> str:
    """The shell call is approved and dispatched, then the process "dies": the log and
    the checkpoints hold what a process killed while the tool ran leaves behind."""
    handle = _session(service, settings, "Run the test suite (interrupted)",
                      ["!pytest -x tests/"])
    try:
        request = handle.waiting_approval()
        assert request is not None, "the offline model asks to approve a shell command"
        call = request.tool_calls[0]
        journal = handle.runner.journal
        before = journal.before_dispatch

        def dispatch_then_die(emit: Emit, run_id: str, tool_name: str, turn: str) -> None:
            if before is not None:
                before(emit, run_id, tool_name, turn)  # the file checkpoint, as in a real run
            handle.writer.append("tool_dispatch", run_id=run_id, call_id=call["call_id"],
                                 tool_name=tool_name,
                                 arguments_sha256=arguments_sha256(call["arguments"]))
            raise _ProcessDied

        journal.before_dispatch = dispatch_then_die
        with contextlib.suppress(_ProcessDied):
            drive(handle, handle.answer(request, ApprovalAnswer.for_all(request, True)),
                  emit=_quiet, ask=_leave_waiting)
        return handle.session_id  # no tool_outcome, no run_end, no session_end
    finally:
        handle.runner.close()
        handle.writer.close()


def _corrupt_session(service: SessionService, settings: Settings) -> str:
    handle = _session(service, settings, "Notes with a damaged line",
                      ["Remember: the log is the source of truth."])
    handle.close()
    with open(handle.writer.path, "ab") as fh:  # a damaged line
        fh.write(b'{"type":"transcript_message","seq":99,"message":{"id":"broken\n')
    return handle.session_id


def _approval_session(service: SessionService, settings: Settings) -> str:
    """A run that stops at an approval: its checkpoint holds the interrupt, so the
    approval is asked again when the session is opened."""
    handle = _session(service, settings, "Clean the build and fix div()", [
        "!rm -rf build && python -m pytest -q\n"
        "/edit src/calc.py return a / b => return a / b if b else 0.0"])
    handle.close()
    return handle.session_id
