"""Property-style crash test: a scripted tool loop killed with SIGKILL at random points.

The model calls a shell tool that appends its call id to a file, a few times per
turn. Each round kills ``mttui exec`` right after a random durable write of the turn
(``support/crash_loop.py``: log appends, checkpoints and their pending writes), then
resumes the session with one more message. After every round:

(a) every side effect happened at most once, and only for a dispatched call;
(b) the model's next request carries every user message since the last compression;
(c) a resume check after the resume has no ``history_length_mismatch``;
(d) the index equals a rebuild.

A handful of rounds run by default; ``-m slow`` runs 30 more.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from tests.support.crash_loop import request_user_texts, run, user_texts_since_compression
from tests.support.fake_openai import FakeOpenAI, text, tools
from tests.support.logs import records as log_records
from tests.support.resume import (
    assert_every_call_answered,
    codes,
    index_equals_rebuild,
    recheck,
)
from tests.support.resume import (
    json_events as events,
)

CALLS_PER_TURN = 3
WRITES_PER_TURN = 8 + 12 * CALLS_PER_TURN  # about: a kill past the end just completes


def _script(fake: FakeOpenAI, round_: int) -> None:
    fake.script.clear()
    for j in range(CALLS_PER_TURN):
        cid = f"call_{round_}_{j}"
        fake.add(tools([(cid, "shell", {"command": f"echo {cid} >> lines.txt"})]))
    fake.add(text(f"loop {round_} done"))


def _rounds(kills: int, seed: int, home: Path, project: Path, fake: FakeOpenAI,
            tmp: Path) -> None:
    rng = random.Random(seed)
    sid: str | None = None
    for i in range(kills):
        _script(fake, i)
        at = rng.randint(1, WRITES_PER_TURN)
        where = ["--session", sid] if sid else []
        code, out, err = run(home, project, fake.url, "--approval", "yolo", *where,
                             f"loop round {i}", MTTUI_CRASH_AT=str(at))  # fmt: skip
        assert code in (-9, 0), err
        if sid is None:
            [path] = (home / "history").glob("*/session-*.jsonl")
            sid = str(log_records(path)[0]["session_id"])
        # resume + one more turn
        fake.script.clear()
        fake.add(text(f"after round {i}"))
        asked = len(fake.requests)
        code, out, err = run(home, project, fake.url, "--approval", "yolo", "--session", sid,
                             f"after round {i}")  # fmt: skip
        assert code == 0, (i, at, err)
        assert [e for e in events(out) if e["event"] == "resumed"]
        assert len(fake.requests) > asked
        records = log_records(next((home / "history").glob(f"*/session-*-{sid}.jsonl")))
        # (a) every side effect at most once, and only for a dispatched call
        marker = project / "lines.txt"
        done = Counter(marker.read_text().split()) if marker.exists() else Counter()
        dispatched = Counter(r["call_id"] for r in records if r["type"] == "tool_dispatch")
        assert all(n == 1 for n in dispatched.values()), dispatched
        assert all(n == 1 and cid in dispatched for cid, n in done.items()), (done, dispatched)
        # (b) the next request carries every user message since the last compression
        last = fake.requests[-1]
        sent = request_user_texts(last)
        for said in user_texts_since_compression(records):
            assert said in sent, (i, at, said)
        assert_every_call_answered(last)
        # (c) no history_length_mismatch after the resume
        after = recheck(home, project, sid)
        assert "history_length_mismatch" not in codes(after), (i, at, after)
        assert after["mode"] == "execution", (i, at, after)
        # (d) the index equals a rebuild
        index_equals_rebuild(home, tmp)


def test_random_kills_in_a_tool_loop(
    home: Path, project: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    _rounds(4, 19, home, project, fake_openai, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_many_random_kills_in_a_tool_loop(
    seed: int, home: Path, project: Path, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    _rounds(10, seed, home, project, fake_openai, tmp_path)
