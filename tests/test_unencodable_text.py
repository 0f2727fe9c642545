"""Text that UTF-8 cannot encode (lone surrogates) never fails a run or a log write.

A lone surrogate reaches us from a model (a ``"\\ud800"`` JSON escape in a
streamed delta) or from a tool (a file name with invalid bytes comes back from
the OS with ``surrogateescape``). The answer is kept with U+FFFD in its place,
and the log writer itself never fails on such text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mttui.graph.events import MessageAdded, RunEnded, TextDelta, ToolFinished
from mttui.session.log import SessionLog, dump_record
from mttui.session.reader import read_all
from tests.support.fake_openai import FakeOpenAI, text, tools


def _end(events: list[Any]) -> RunEnded:
    ends = [e for e in events if isinstance(e, RunEnded)]
    assert ends, events
    return ends[-1]


def _lines_are_utf8_json(path: Path) -> list[dict[str, Any]]:
    raw = path.read_bytes()
    assert raw.endswith(b"\n")
    out = []
    for line in raw.split(b"\n")[:-1]:
        out.append(json.loads(line.decode("utf-8")))  # strict: raises on invalid UTF-8
    return out


def test_lone_surrogate_in_a_streamed_delta_keeps_the_answer(
    make_runner: Any, fake_openai: FakeOpenAI
) -> None:
    fake_openai.add(text("before \ud800 after", pieces=3))
    runner = make_runner("openai", url=fake_openai.url)
    events = list(runner.run("say something odd"))
    assert _end(events).status == "completed", events
    answer = [e.message for e in events if isinstance(e, MessageAdded)][-1]
    assert answer["role"] == "assistant"
    assert answer["content"] == "before \ufffd after"
    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert shown == "before \ufffd after"
    records = _lines_are_utf8_json(runner.writer.path)
    said = [r["message"]["content"] for r in records if r["type"] == "transcript_message"]
    assert said[-1] == "before \ufffd after"
    # the session goes on: the checkpoint holds the answer and the next turn sends it
    again = list(runner.run("and now?"))
    assert _end(again).status == "completed"
    sent = json.dumps(fake_openai.requests[-1]["messages"], ensure_ascii=False)
    assert "before \ufffd after" in sent


def test_surrogate_pair_from_a_model_is_one_character(
    make_runner: Any, fake_openai: FakeOpenAI
) -> None:
    fake_openai.add(text("smile \ud83d\ude00 and half \udc00", pieces=1))
    runner = make_runner("openai", url=fake_openai.url)
    events = list(runner.run("emoji please"))
    assert _end(events).status == "completed"
    answer = [e.message for e in events if isinstance(e, MessageAdded)][-1]
    assert answer["content"] == "smile \U0001f600 and half \ufffd"


def test_tool_output_with_invalid_bytes_completes_the_run(
    make_runner: Any, fake_openai: FakeOpenAI, project: Path
) -> None:
    (project / "ok.txt").write_text("fine\n")
    bad = project.as_posix().encode() + b"/bad-\xff\xfe-name.txt"
    with open(bad, "wb") as fh:
        fh.write(b"x\n")
    fake_openai.add(
        tools(
            [
                ("call_1", "list_dir", {"path": "."}),
                ("call_2", "shell", {"command": "printf 'raw \\xff\\xed\\xa0\\x80 end\\n'; ls"}),
                ("call_3", "search_files", {"pattern": "x"}),
            ]
        ),
        text("looked"),
    )
    runner = make_runner("openai", url=fake_openai.url, approval="yolo")
    events = list(runner.run("look around"))
    assert _end(events).status == "completed", events
    outputs = {e.call_id: e.output for e in events if isinstance(e, ToolFinished)}
    assert set(outputs) == {"call_1", "call_2", "call_3"}
    for out in outputs.values():
        out.encode("utf-8")  # strict: nothing unencodable left
    assert "bad-\ufffd\ufffd-name.txt" in outputs["call_1"]
    assert "raw \ufffd" in outputs["call_2"] and "bad-" in outputs["call_2"]
    assert "bad-\ufffd\ufffd-name.txt" in outputs["call_3"]
    records = _lines_are_utf8_json(runner.writer.path)
    assert [r["message"]["content"] for r in records if r["type"] == "transcript_message"][
        -1
    ] == "looked"
    # the tool results reached the model in the next request
    sent = json.dumps(fake_openai.requests[-1]["messages"], ensure_ascii=False)
    assert "bad-\ufffd\ufffd-name.txt" in sent


def test_dump_record_never_fails_on_unencodable_text() -> None:
    line = dump_record({"a": "x\ud800y", "b": ["\udcff", {"k\udc80": "\ud83d\ude00"}]})
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    back = json.loads(line.decode("utf-8"))
    assert back == {"a": "x\ufffdy", "b": ["\ufffd", {"k\ufffd": "\U0001f600"}]}
    # ordinary text is written exactly as before
    plain = {"type": "x", "text": "h\u00e9llo \U0001f600 \u2028"}
    assert dump_record(plain) == (
        json.dumps(plain, ensure_ascii=False, separators=(",", ":")) + "\n"
    ).encode("utf-8")


def test_the_log_writer_keeps_a_record_with_a_lone_surrogate(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    log = SessionLog.create(path, "ses-1")
    try:
        log.append("transcript_message", message={"role": "assistant", "content": "a\ud800b"})
        log.append("note", text="after")
    finally:
        log.close()
    records = _lines_are_utf8_json(path)
    assert [r["seq"] for r in records] == [1, 2]
    assert records[0]["message"]["content"] == "a\ufffdb"
    got, report = read_all(path)
    assert len(got) == 2 and not report.corrupt_lines
