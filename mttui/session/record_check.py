"""Type checks of the record contract: a wrong-typed field never reaches a reader.

:func:`checked` returns a record with every known field of the wrong type left
out (list items of the wrong shape dropped), and the names of what was left
out, so the reader can report the line. ``null`` passes for text and number
fields (the writer writes it for some); a ``null`` list or object is left out
silently. Unknown fields pass through untouched.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from .utf8 import valid_data

Value = object
_DROP = object()  # the sentinel of a value that does not fit
Check = Callable[[Value], Value]


def _text(v: Value) -> Value:
    return v if v is None or isinstance(v, str) else _DROP


INT_MAX = 2**63 - 1  # what SQLite stores


def is_integer(v: Value) -> bool:
    """A JSON integer SQLite can store (``true`` is no integer)."""
    return isinstance(v, int) and not isinstance(v, bool) and -INT_MAX <= v <= INT_MAX


def _integer(v: Value) -> Value:
    return v if v is None or is_integer(v) else _DROP


def _flag(v: Value) -> Value:
    return v if v is None or isinstance(v, bool) else _DROP


def _flag_or_text(v: Value) -> Value:
    # ``run_start.continues``: true (a stopped run goes on) or the approval request id
    # whose answer resumes the run
    return v if v is None or isinstance(v, (bool, str)) else _DROP


def _content(v: Value) -> Value:
    # text, or LangChain content blocks (strings or objects)
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, list) and all(isinstance(p, (str, dict)) for p in v):
        return v
    return _DROP


def _obj(v: Value) -> Value:
    return v if isinstance(v, dict) else _DROP


def _texts(v: Value) -> Value:
    return v if isinstance(v, list) and all(isinstance(x, str) for x in v) else _DROP


def _map_of(item: Check) -> Check:
    def check(v: Value) -> Value:
        if not isinstance(v, dict):
            return _DROP
        if all(item(x) is x and x is not None for x in v.values()):
            return v
        return _DROP

    return check


def _shape(fields: Mapping[str, Check]) -> Check:
    """An object whose known fields are checked (wrong ones left out)."""

    def check(v: Value) -> Value:
        if not isinstance(v, dict):
            return _DROP
        out, bad = _fields(v, fields)
        return _Fixed(out) if bad else out

    return check


def _list_of(item: Check) -> Check:
    """A list whose items that do not fit are left out (the list itself must be one)."""

    def check(v: Value) -> Value:
        if not isinstance(v, list):
            return _DROP
        kept = [item(x) for x in v]
        good = [x for x in kept if x is not _DROP and x is not None]
        if len(good) == len(v) and not any(isinstance(x, _Fixed) for x in good):
            return good
        return _Partial(dict(x) if isinstance(x, _Fixed) else x for x in good)

    return check


class _Partial(list[object]):
    """A list some of whose items were left out (kept, and reported)."""


class _Fixed(dict[str, object]):
    """An object some of whose fields were left out (kept, and reported)."""


def _required(fields: Mapping[str, Check], *names: str) -> Check:
    """Like :func:`_shape`, but the object is dropped when a named field is missing."""
    shape = _shape(fields)

    def check(v: Value) -> Value:
        out = shape(v)
        if not isinstance(out, dict) or any(not isinstance(out.get(n), str) for n in names):
            return _DROP
        return out

    return check


_USAGE = _shape({"input_tokens": _integer, "output_tokens": _integer, "estimated": _flag})
_TOOL_CALL = _required({"id": _text, "name": _text, "args": _obj, "type": _text}, "id")
_APPROVAL_CALL = _required(
    {"call_id": _text, "tool_name": _text, "arguments": _obj, "risk_level": _text}, "call_id"
)
_ATTACHMENT = _shape({"path": _text, "sha256": _text, "bytes": _integer})
_MESSAGE = _shape(
    {
        "id": _text, "role": _text, "content": _content, "tool_calls": _list_of(_TOOL_CALL),
        "tool_call_id": _text, "name": _text, "status": _text, "usage": _USAGE,
        "read_at": _text, "error": _text, "created_at": _text,
        "attachments": _list_of(_ATTACHMENT),
    }
)  # fmt: skip

_TEXT_FIELDS = [
    "timestamp", "session_id", "thread_id", "project", "project_hash", "provider", "model",
    "title", "app_version", "message_id", "status", "read_at", "error", "run_id", "request_id",
    "reason", "call_id", "tool_name", "arguments_sha256", "summary", "trigger", "mode",
    "item_id", "pending_id", "id", "text", "fork_state",
]  # fmt: skip
_INT_FIELDS = ["v", "removed_count", "kept_count", "tokens_before", "tokens_after", "position"]
_LIST_FIELDS = ["remember", "tools", "kept_message_ids", "warnings", "item_ids", "message_ids"]

FIELDS: Mapping[str, Check] = {
    **{name: _text for name in _TEXT_FIELDS},
    **{name: _integer for name in _INT_FIELDS},
    **{name: _texts for name in _LIST_FIELDS},
    "continues": _flag_or_text,
    "content": _content,
    "usage": _USAGE,
    "forked_from": _obj,
    "message": _MESSAGE,
    "tool_calls": _list_of(_APPROVAL_CALL),
    "decisions": _map_of(_text),
    "stats": _map_of(_integer),
}


def _fields(
    rec: dict[str, Value], fields: Mapping[str, Check]
) -> tuple[dict[str, Value], list[str]]:
    out: dict[str, Value] = {}
    bad: list[str] = []
    for key, value in rec.items():
        check = fields.get(key)
        if check is None or (value.__class__ is str and check in _TAKES_TEXT):
            out[key] = value  # unknown, or text where text is fine: most fields
            continue
        if value is None and check not in (_text, _integer, _flag, _flag_or_text, _content):
            continue  # a null list/object: as if absent
        fixed = check(value)
        if fixed is _DROP:
            bad.append(key)
            continue
        if isinstance(fixed, _Partial):
            bad.append(key)
            fixed = list(fixed)
        elif isinstance(fixed, _Fixed):
            bad.append(key)
            fixed = dict(fixed)
        out[key] = fixed
    return out, bad


_TAKES_TEXT = frozenset({_text, _content, _flag_or_text})


def checked(rec: dict[str, Value]) -> tuple[dict[str, Value], list[str]]:
    """``rec`` with wrong-typed fields left out, and their names (empty: all fine)."""
    return _fields(rec, FIELDS)


def without_surrogates(rec: dict[str, Value]) -> dict[str, Value]:
    """``rec`` with lone surrogates (from ``\\ud800`` escapes) replaced by U+FFFD."""
    fixed = valid_data(rec)
    assert isinstance(fixed, dict)
    return fixed
