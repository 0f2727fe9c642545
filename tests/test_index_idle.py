"""A service lets go of the index while a rebuild waits for it (or while idle), so
that the rebuild can rename its build in; it reopens on its next use, without taking
the same file for a new one (which would cost a catch-up of every log)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from mttui.session.index import users
from mttui.session.index.handle import IndexFile
from mttui.session.paths import Layout
from mttui.session.service import SessionService
from tests.support import logs


def _until(check: Callable[[], bool], seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.02)
    return False


def _nobody_has_it(index: Path) -> bool:
    with users.alone(index) as alone:
        return alone


def test_an_idle_connection_is_let_go_and_the_same_file_reopened_is_not_new(home: Path) -> None:
    layout = Layout(home)
    index = IndexFile(layout, idle_seconds=0.2)
    conn, new = index.get()
    assert new
    assert not _nobody_has_it(layout.index_path)
    assert _until(lambda: _nobody_has_it(layout.index_path))
    again, new = index.get()
    assert again is not conn and not new
    assert again.execute("SELECT count(*) FROM sessions").fetchone() == (0,)
    index.close()


def test_it_is_never_let_go_while_its_owner_holds_the_lock(home: Path) -> None:
    layout, lock = Layout(home), threading.RLock()
    index = IndexFile(layout, lock, idle_seconds=0.1)
    with lock:
        conn, _ = index.get()
        time.sleep(0.5)  # five idle periods, in use all along
        assert conn.execute("SELECT 1").fetchone() == (1,)
        assert not _nobody_has_it(layout.index_path)
    assert _until(lambda: _nobody_has_it(layout.index_path))


def test_kept_in_use_it_stays_open(home: Path) -> None:
    layout = Layout(home)
    index = IndexFile(layout, idle_seconds=0.3)
    conn, _ = index.get()
    for _ in range(15):  # 1.5 s of uses 0.1 s apart
        time.sleep(0.1)
        assert index.get() == (conn, False)
    index.close()
    assert _nobody_has_it(layout.index_path)


def test_a_file_replaced_while_it_was_let_go_is_new(home: Path, project: Path) -> None:
    service = SessionService(home, project)
    logs.new_session(service, [logs.message("m1", "user", "hello there")])
    service.close()
    layout = Layout(home)
    index = IndexFile(layout, idle_seconds=0.1)
    index.get()
    assert _until(lambda: _nobody_has_it(layout.index_path))
    before = layout.index_path.stat().st_ino
    SessionService(home, project).reindex()  # renamed in: nobody has it open
    assert layout.index_path.stat().st_ino != before
    conn, new = index.get()
    assert new
    assert conn.execute("SELECT count(*) FROM messages").fetchone() == (1,)
    index.close()


def test_a_service_lets_go_for_a_rebuild_and_answers_after_it(home: Path, project: Path) -> None:
    service = SessionService(home, project)
    sid = logs.new_session(service, [logs.message("m1", "user", "zebra crossing")]).session_id
    assert [s.id for s in service.list_sessions().sessions] == [sid]
    wish = users.wanted_path(service.layout.index_path)
    wish.write_text(f"{os.getpid()}\n")  # a rebuild waits (long before it would idle)
    try:
        assert _until(lambda: _nobody_has_it(service.layout.index_path))
    finally:
        wish.unlink()
    assert [h.session_id for h in service.search("zebra", scope="all")] == [sid]
    assert not _nobody_has_it(service.layout.index_path)  # open again
    service.close()


def test_a_rebuild_waiting_for_the_index_has_it_let_go_between_uses_only(home: Path) -> None:
    layout, lock = Layout(home), threading.RLock()
    index = IndexFile(layout, lock, idle_seconds=60.0)  # not for being idle, then
    wish = users.wanted_path(layout.index_path)
    try:
        with lock:  # one use, which holds the connection across nested calls
            conn, _ = index.get()
            wish.write_text(f"{os.getpid()}\n")  # a rebuild in this process waits
            time.sleep(0.3)
            assert index.get() == (conn, False)
            assert conn.execute("SELECT count(*) FROM sessions").fetchone() == (0,)
        assert _until(lambda: _nobody_has_it(layout.index_path))  # let go after the use
    finally:
        wish.unlink(missing_ok=True)
    again, new = index.get()  # reopened once the rebuild is done: the same file
    assert again is not conn and not new
    index.close()


def _watchers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "mttui-index-watch"]


def test_a_closed_or_dropped_owner_stops_its_watcher(home: Path) -> None:
    # A test run made hundreds of services: each watcher polled 20 times a second
    # for 30 s after its last use, closed or not.
    layout = Layout(home)
    before = set(_watchers())
    closed = IndexFile(layout)
    closed.get()
    mine = set(_watchers()) - before
    assert len(mine) == 1
    closed.close()
    assert _until(lambda: not (mine & set(_watchers())), 2.0)
    closed.get()  # reopened: watched again
    again = set(_watchers()) - before
    assert len(again) == 1
    del closed  # dropped without close: its connection and its watcher go with it
    assert _until(lambda: not (again & set(_watchers())), 2.0)
    assert _until(lambda: _nobody_has_it(layout.index_path), 2.0)
