"""The session layer's value classes behave as the dataclasses they replace."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from mttui.session.models import SessionInfo, SessionPage, SessionStatus
from mttui.session.plain import FrozenInstanceError, Plain, field, replace
from mttui.session.reader import ReadStats


class Point(Plain):
    x: int
    y: int = 0
    tags: list[str] = field(default_factory=list)


@dataclasses.dataclass(frozen=True)
class DataPoint:
    x: int
    y: int = 0
    tags: list[str] = dataclasses.field(default_factory=list)


class Counter(Plain, frozen=False):
    n: int = 0


def test_init_eq_repr_as_a_dataclass() -> None:
    for args, kwargs in [((1,), {}), ((1, 2), {}), ((), {"x": 3, "y": 4}), ((5,), {"tags": ["a"]})]:
        mine, theirs = Point(*args, **kwargs), DataPoint(*args, **kwargs)  # type: ignore[arg-type]
        assert (mine.x, mine.y, mine.tags) == (theirs.x, theirs.y, theirs.tags)
        assert repr(mine) == repr(theirs).replace("DataPoint", "Point")
    assert Point(1) == Point(1, 0, [])
    assert Point(1) != Point(2)
    assert Point(1) != DataPoint(1)  # another class is never equal
    assert Point(1).tags is not Point(1).tags  # a new default per instance
    nan = float("nan")
    assert Point(1, tags=[nan]) == Point(1, tags=[nan])  # type: ignore[list-item]  # as tuples
    assert Point(1).__dict__.keys() == {"x", "y", "tags"}
    assert "tags" not in Point.__dict__  # the factory is not left as a class attribute


def test_bad_arguments_are_refused_as_by_a_dataclass() -> None:
    with pytest.raises(TypeError):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Point(1, 2, [], 4)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Point(1, x=2)  # type: ignore[misc]
    with pytest.raises(TypeError):
        Point(1, z=2)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        class Bad(Plain):  # a field without a default after one with
            a: int = 0
            b: int  # type: ignore[misc]


def test_frozen_hashable_and_replace() -> None:
    p = Point(1, 2)
    with pytest.raises(FrozenInstanceError):
        p.x = 3  # type: ignore[misc]
    with pytest.raises(AttributeError):  # as dataclasses.FrozenInstanceError is
        del p.y
    assert hash(SessionStatus(queued=1)) == hash(SessionStatus(queued=1))
    assert {SessionStatus(queued=1), SessionStatus(queued=1)} == {SessionStatus(queued=1)}
    q = replace(p, y=5)
    assert (q.x, q.y, p.y) == (1, 5, 2)
    with pytest.raises(TypeError):
        replace(p, z=1)
    assert copy.copy(p) == p and copy.deepcopy(p) == p
    assert pickle.loads(pickle.dumps(SessionPage([], None))) == SessionPage([], None)


def test_a_mutable_class_is_mutable_and_unhashable() -> None:
    c = Counter()
    c.n += 2
    assert c == Counter(2)
    with pytest.raises(TypeError):
        hash(c)
    stats = ReadStats()
    stats.corrupt_offsets.append(3)
    assert ReadStats().corrupt_offsets == []


def test_session_info_defaults() -> None:
    info = SessionInfo("id", None, "p", "h", Path("x"), "c", "u", 0, None, None, None)
    assert info.status == SessionStatus() and info.fork is None and info.parent_title is None
    assert replace(info, title="t").title == "t" and info.title is None


def test_the_search_command_does_not_import_dataclasses(tmp_path: Path) -> None:
    """What the value classes are for: ``mttui search`` and the session layer start
    without ``dataclasses`` (and ``inspect``) and without OpenSSL's hashlib."""
    code = ("import sys; from mttui.cli import read; import mttui.session.service; "
            "print(' '.join(sorted({'dataclasses', 'inspect', 'hashlib'} & set(sys.modules))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=tmp_path)  # fmt: skip
    assert out.stdout.split() == []
