"""Fork where it meets the queue, steers and rewind: it copies exactly the first SEQ
messages ``history`` shows, never a call without its result, never a rewound branch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mttui.session.service import SessionService
from tests.support.fake_openai import FakeOpenAI, text, tools
from tests.support.resume import check, cli, codes
from tests.support.timetravel import run_json


def _env(fake: FakeOpenAI) -> dict[str, str]:
    return {"OPENAI_BASE_URL": fake.url, "OPENAI_API_KEY": "sk-test"}


def _history(home: Path, project: Path, sid: str) -> list[dict[str, Any]]:
    return list(run_json(home, project, "history", sid, "--limit", "1000")["messages"])


def _sent(fake: FakeOpenAI) -> list[str]:
    """The non-system texts of the last request the model received."""
    return [str(m.get("content")) for m in fake.requests[-1]["messages"]
            if m.get("role") != "system"]


def _queued_session(home: Path, project: Path, fake: FakeOpenAI) -> str:
    """hello (1-2), a queued input (3-4), a tool turn (5-8), a last exchange (9-10)."""
    fake.add(text("hi"), text("got the queued one"),
             tools([("s1", "shell", {"command": "echo one > one.txt"})]), text("ran"),
             text("last"))
    env = _env(fake)
    assert cli(home, project, "exec", "hello", **env).returncode == 0
    sid = SessionService(home, project).resolve("last").id
    assert cli(home, project, "queue", "add", sid, "queued via cli").returncode == 0
    assert cli(home, project, "queue", "resume", sid, **env).returncode == 0
    for prompt in ("run it", "and then"):
        r = cli(home, project, "exec", "--session", sid, "--approve", "all", prompt, **env)
        assert r.returncode == 0, r.stderr
    return sid


def test_fork_after_a_queued_input_copies_exactly_seq_messages(
    home: Path, project: Path, fake_openai: FakeOpenAI
) -> None:
    sid = _queued_session(home, project, fake_openai)
    source = _history(home, project, sid)
    assert [m["role"] for m in source[4:8]] == ["user", "assistant", "tool", "assistant"]
    for at in (5, 8, 10):
        forked = run_json(home, project, "fork", sid, "--at", str(at))
        assert forked["messages"] == at and forked["adjusted_from"] is None
        copied = _history(home, project, forked["session_id"])
        assert [(m["id"], m["role"]) for m in copied] == [
            (m["id"], m["role"]) for m in source[:at]]
        assert "transcript_incomplete" not in codes(check(home, project,
                                                         forked["session_id"]))
    # inside the tool batch (the call at 6, its result at 7): back to before the call
    forked = run_json(home, project, "fork", sid, "--at", "6")
    assert (forked["messages"], forked["adjusted_from"]) == (5, 6)


def test_fork_after_a_rewind_never_brings_the_rewound_turn_back(
    home: Path, project: Path, fake_openai: FakeOpenAI
) -> None:
    sid = _queued_session(home, project, fake_openai)
    run_json(home, project, "rewind", sid, "--to", "5", "--conversation", "--yes")
    fake_openai.add(text("after rewind"), text("in the fork"), text("in the fork 2"))
    env = _env(fake_openai)
    r = cli(home, project, "exec", "--session", sid, "another way", **env)
    assert r.returncode == 0, r.stderr
    live = _sent(fake_openai)
    assert "run it" not in live and "hello" in live
    for args in ((), ("--at", "4")):  # the last message, and a point before the branch
        forked = run_json(home, project, "fork", sid, *args)
        r = cli(home, project, "exec", "--session", forked["session_id"], "go on", **env)
        assert r.returncode == 0, r.stderr
        seen = _sent(fake_openai)
        assert "run it" not in seen and "and then" not in seen and "ran" not in seen, seen
        assert "queued via cli" in seen
        assert ("another way" in seen) == (not args)


def test_fork_and_rewind_keep_the_file_blocks_the_model_was_sent(
    home: Path, project: Path, fake_openai: FakeOpenAI
) -> None:
    (project / "notes.txt").write_text("the body of the notes, version one\n")
    fake_openai.add(text("read it"), text("second"))
    env = _env(fake_openai)
    assert cli(home, project, "exec", "look at @notes.txt please", **env).returncode == 0
    sid = SessionService(home, project).resolve("last").id
    assert "version one" in "".join(_sent(fake_openai))
    r = cli(home, project, "exec", "--session", sid, "thanks", **env)
    assert r.returncode == 0, r.stderr
    (project / "notes.txt").write_text("changed on disk since\n")  # not what was sent
    forked = run_json(home, project, "fork", sid, "--at", "2")
    fake_openai.add(text("in fork"), text("after rewind"))
    r = cli(home, project, "exec", "--session", forked["session_id"], "go on", **env)
    assert r.returncode == 0, r.stderr
    seen = "".join(_sent(fake_openai))
    assert "version one" in seen and '<file path="notes.txt">' in seen
    run_json(home, project, "rewind", sid, "--to", "3", "--conversation", "--yes")
    r = cli(home, project, "exec", "--session", sid, "again", **env)
    assert r.returncode == 0, r.stderr
    seen = "".join(_sent(fake_openai))
    assert "version one" in seen and "thanks" not in seen


def test_a_rewound_turn_never_comes_back_through_compaction_or_resume(
    home: Path, project: Path, fake_openai: FakeOpenAI
) -> None:
    long = "a long first exchange " * 200
    fake_openai.add(text("first answer " + long), text("second answer " + long),
                    tools([("s1", "shell", {"command": "echo one > one.txt"})]), text("ran"))
    env = _env(fake_openai)
    assert cli(home, project, "exec", "hello " + long, **env).returncode == 0
    sid = SessionService(home, project).resolve("last").id
    for prompt in ("more " + long, "run it"):
        r = cli(home, project, "exec", "--session", sid, "--approve", "all", prompt, **env)
        assert r.returncode == 0, r.stderr
    run_json(home, project, "rewind", sid, "--to", "5", "--conversation", "--yes")
    fake_openai.add(text("S!"))  # shorter than what it replaces
    r = cli(home, project, "compact", sid, **env)
    assert r.returncode == 0 and "nothing to compress" not in r.stdout, r.stdout
    summarised = "".join(str(m.get("content")) for m in fake_openai.requests[-1]["messages"])
    assert "hello" in summarised and "run it" not in summarised and "ran" not in summarised
    r = cli(home, project, "exec", "--session", sid, "next", **env)
    assert r.returncode == 0, r.stderr
    seen = "".join(_sent(fake_openai))
    assert "run it" not in seen and "S!" in seen and "echo one" not in seen


def test_a_code_rewind_in_a_fork_to_a_copied_message_restores_the_tree_before_it(
    home: Path, project: Path, fake_openai: FakeOpenAI
) -> None:
    """The source changed files after that message (after the fork point, but before the
    fork's own first snapshot): its snapshot came first in time and is the one restored;
    the fork's own later snapshot would keep the source's change."""
    sid = _queued_session(home, project, fake_openai)  # its turn 5 wrote one.txt
    forked = run_json(home, project, "fork", sid, "--at", "4")["session_id"]
    fake_openai.add(tools([("w1", "write_file", {"path": "f.txt", "content": "f\n"})]),
                    text("wrote"))
    r = cli(home, project, "exec", "--session", forked, "--approve", "all", "write f",
            **_env(fake_openai))
    assert r.returncode == 0, r.stderr
    done = run_json(home, project, "rewind", forked, "--to", "3", "--code", "--yes")
    assert sorted(done["files_deleted"]) == ["f.txt", "one.txt"]
    assert not (project / "one.txt").exists() and not (project / "f.txt").exists()


def test_a_quiet_turn_of_a_fork_made_after_a_rewind_is_not_taken_for_a_copy(
    service: SessionService, project: Path
) -> None:
    """The source had a rewound message the fork did not copy: numbering differs, so
    copies are known by their ids, not by the source's fork point."""
    from mttui.core.fork import fork
    from mttui.core.handle import SessionHandle
    from mttui.core.rewind import rewind
    from tests.support.handles import approve_waiting, offline

    handle = SessionHandle.create(service, offline(), "K1 hello")
    try:
        list(handle.run("K1 hello"))
        sid = handle.session_id
    finally:
        handle.close()
    rewind(service, offline(), sid, 1, conversation=True, code=False)
    handle = SessionHandle.open(service, offline(), sid)
    try:
        list(handle.run("K2 again"))
    finally:
        handle.close()
    forked = fork(service, offline(), sid).session_id
    handle = SessionHandle.open(service, offline(), forked)
    try:
        list(handle.run("K3 quiet"))
        list(handle.run("/write w.txt W"))
        approve_waiting(handle)
    finally:
        handle.close()
    records, _ = service.records(forked)
    from mttui.session.transcript import fold

    seq = next(i + 1 for i, m in enumerate(fold(records).messages)
               if m.get("content") == "K3 quiet")
    done = rewind(service, offline(), forked, seq, conversation=False, code=True)
    assert done.files_deleted == ["w.txt"] and not (project / "w.txt").exists()


def test_a_fork_sends_a_batch_of_steers_as_one_message_as_the_source_did(
    service: SessionService, project: Path, fake_openai: FakeOpenAI
) -> None:
    from mttui.config import Settings
    from mttui.core.fork import fork
    from mttui.core.handle import SessionHandle
    from tests.support.handles import approve_waiting

    settings = Settings(provider="openai", model="fake", base_url=fake_openai.url,
                        api_key="sk-test", approval="ask")
    fake_openai.add(text("hi"),
                    tools([("w1", "write_file", {"path": "w.txt", "content": "w\n"})]),
                    text("read both steers"), text("in the fork"))
    handle = SessionHandle.create(service, settings, "hello")
    try:
        list(handle.run("hello"))
        list(handle.run("write it"))  # waits for approval; two steers typed meanwhile
        handle.pending.steer("steer one")
        handle.pending.steer("steer two")
        approve_waiting(handle)
        sid = handle.session_id
    finally:
        handle.close()
    source = [m for m in fake_openai.requests[-1]["messages"] if m.get("role") == "user"]
    assert [m["content"] for m in source][-1] == "steer one\n\nsteer two"
    forked = fork(service, settings, sid).session_id
    handle = SessionHandle.open(service, settings, forked)
    try:
        list(handle.run("go on"))
    finally:
        handle.close()
    users = [m["content"] for m in fake_openai.requests[-1]["messages"] if m.get("role") == "user"]
    assert users == [m["content"] for m in source] + ["go on"]


def test_a_fork_of_a_fork_keeps_a_batch_of_steers_as_one_message(
    service: SessionService, project: Path, fake_openai: FakeOpenAI
) -> None:
    from mttui.config import Settings
    from mttui.core.fork import fork
    from mttui.core.handle import SessionHandle
    from tests.support.handles import approve_waiting

    settings = Settings(provider="openai", model="fake", base_url=fake_openai.url,
                        api_key="sk-test", approval="ask")
    fake_openai.add(tools([("w1", "write_file", {"path": "w.txt", "content": "w\n"})]),
                    text("read both steers"), text("f1"), text("f2"))
    handle = SessionHandle.create(service, settings, "write it")
    try:
        list(handle.run("write it"))
        handle.pending.steer("steer one")
        handle.pending.steer("steer two")
        approve_waiting(handle)
        sid = handle.session_id
    finally:
        handle.close()
    first = fork(service, settings, sid).session_id
    for source in (first, fork(service, settings, first).session_id):
        handle = SessionHandle.open(service, settings, source)
        try:
            list(handle.run("go on"))
        finally:
            handle.close()
        users = [m["content"] for m in fake_openai.requests[-1]["messages"]
                 if m.get("role") == "user"]
        assert "steer one\n\nsteer two" in users, users
