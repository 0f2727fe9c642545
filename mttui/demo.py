"""Sample sessions for ``mttui demo`` (no Textual here).

Everything is written through ``SessionService``/``SessionWriter`` as real
records; the session that waits for an approval is produced by a real run of
the offline model, so its checkpoint holds the interrupt and the approval is
asked again when it is opened. Running it twice adds nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mttui.session.records import new_id
from mttui.session.service import SessionService
from mttui.session.writer import SessionWriter

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
    ids = [
        _long_session(service),
        _chinese_session(service),
        _queued_session(service),
        _interrupted_session(service),
        _corrupt_session(service),
        _approval_session(service, project),
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


def _chinese_session(service: SessionService) -> str:
    with service.create_session(provider="offline", model="offline",
                                title="重构会话存储：快速分页与全文搜索") as w:
        w.append_many([
            _msg("user", "请解释一下为什么会话列表要用键集分页，而不是 OFFSET？"),
            _msg("assistant", "因为 **OFFSET** 需要先扫描并丢弃前面的所有行，页数越大越慢；"
                              "键集分页直接从上一页最后一条记录继续，代价与页码无关。\n\n"
                              "- 列表：按 `(updated_at, id)` 排序\n- 历史：按 `msg_seq` 排序"),
            _msg("user", "那中文搜索呢？两个字的查询能找到吗？"),
            _msg("assistant", "可以。三字及以上用 trigram 全文索引，"
                              "少于三个字时回退到 `instr()` 子串匹配，例如“快速”。"),
        ])
        return w.session_id


def _queued_session(service: SessionService) -> str:
    with service.create_session(provider="offline", model="offline",
                                title="Write the release notes") as w:
        w.append_many([
            _msg("user", "Draft release notes for version 0.1."),
            _msg("assistant", "## mttui 0.1\n\n- durable sessions\n- search\n- resume"),
        ])
        for text in ("Also mention the offline model.", "Then shorten it to five lines."):
            w.append("pending_add", item_id=new_id("pending"), mode="queue", text=text)
        return w.session_id


def _interrupted_session(service: SessionService) -> str:
    with service.create_session(provider="offline", model="offline",
                                title="Run the test suite (interrupted)") as w:
        run_id, call = new_id("run"), "call_pytest"
        args = {"command": "pytest -x tests/"}
        w.append_many([
            ("run_start", {"run_id": run_id}),
            _msg("user", "!pytest -x tests/"),
            _msg("assistant", "", tool_calls=[{"id": call, "name": "shell", "args": args}]),
            ("approval_request", {"request_id": "req_pytest", "run_id": run_id, "tool_calls": [
                {"call_id": call, "tool_name": "shell", "arguments": args,
                 "risk_level": "high"}]}),
            ("approval_decision", {"request_id": "req_pytest", "decisions": {call: "approve"}}),
        ])
        w.append("tool_dispatch", run_id=run_id, call_id=call, tool_name="shell",
                 arguments_sha256="0" * 64)
        return w.session_id  # no tool_outcome: the process "died" while the tool ran


def _corrupt_session(service: SessionService) -> str:
    with service.create_session(provider="offline", model="offline",
                                title="Notes with a damaged line") as w:
        w.append_many([_msg("user", "Remember: the log is the source of truth."),
                       _msg("assistant", "Noted. A damaged line is skipped and counted.")])
        path, sid = w.path, w.session_id
    with open(path, "ab") as fh:
        fh.write(b'{"type":"transcript_message","seq":9,"message":{"id":"broken\n')
    return sid


def _approval_session(service: SessionService, project: Path) -> str:
    """A real run of the offline model that stops at an approval (checkpoint included)."""
    from mttui.config import Settings
    from mttui.graph.runner import Runner

    settings = Settings(provider="offline", model="offline", approval="ask")
    writer: SessionWriter = service.create_session(provider="offline", model="offline",
                                                   title="Clean the build and fix div()")
    runner = Runner.for_service(service, writer, settings)
    try:
        for _ in runner.run("!rm -rf build && python -m pytest -q\n"
                            "/edit src/calc.py return a / b => return a / b if b else 0.0"):
            pass
        return writer.session_id
    finally:
        runner.close()
        writer.close()
