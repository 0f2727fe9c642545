"""A light, read-only look at the newest checkpoint of a thread, without LangGraph.

``mttui resume-check`` needs a few facts of the checkpoint: the messages in the
model's view (ids, kinds, tool calls), the approval fields, the nodes left to run and
the pending interrupts. ``get_state`` costs about a second of imports in a fresh
process; ``sqlite3`` and ``ormsgpack`` read the same facts in milliseconds.

It reproduces what ``get_state`` derives from the SQLite saver's tables for this
app's graph (one task per node, triggered by its ``branch:to:<node>`` channel): the
newest ``checkpoints`` row and its ``writes`` (one read transaction); ``values`` =
the state channels of ``channel_values``; ``next`` = each node whose trigger is set
and newer than the version it has seen (``versions_seen``), its task unfinished;
``interrupts`` = the ``__interrupt__`` writes of those tasks, matched by task id
(LangGraph's hash). Anything else — another checkpoint version or serialization
type, an unknown msgpack extension or message class, a finished task whose writes
would change the state, a join or ``Send`` — gives ``None``, and the caller asks
LangGraph. It never guesses.
"""

from __future__ import annotations

import binascii
import json
from dataclasses import dataclass, field
from pathlib import Path

from .checkpoint_messages import REFS
from .checkpoint_store import CheckpointRow, WriteRow, newest_checkpoint

CHECKPOINT_VERSION = 4  # the checkpoint layout this reader knows (``Checkpoint["v"]``)
START, TASKS, BRANCH = "__start__", "__pregel_tasks", "branch:to:"
PULL = "__pregel_pull"
INTERRUPT, NULL_TASK = "__interrupt__", "00000000-0000-0000-0000-000000000000"
# writes that say what happened to a task, not what it produced (LangGraph's
# ``CONTROL_WRITES``); any other write means the task finished
CONTROL = frozenset({INTERRUPT, "__resume__", "__error__", "__error_source_node__"})
# the serialization types of ``JsonPlusSerializer.loads_typed`` that need no decoding
PLAIN_TYPES = frozenset({"null", "bytes", "bytearray"})
# msgpack extension codes of ``langgraph.checkpoint.serde.jsonplus``: constructors
# (single, positional, keyword arguments), a method, pydantic v1 and v2 models; numpy
# arrays (6), delta snapshots (7) and any newer code are refused
EXT_KW_ARGS, EXT_PYDANTIC_V2, KNOWN_EXT = 2, 5, frozenset(range(6))
INTERRUPT_FIELDS = frozenset({"value", "id", "response_schema"})  # ``langgraph.types``
MESSAGE_TYPES = {"HumanMessage": "human", "AIMessage": "ai", "ToolMessage": "tool",
                 "SystemMessage": "system"}  # fmt: skip


class Unrecognised(Exception):
    """Something this reader does not know how LangGraph would read."""


@dataclass(frozen=True)
class PeekMessage:
    """What the planner reads of a checkpointed LangChain message."""

    id: str | None
    type: str  # human | ai | tool | system
    tool_calls: list[dict[str, object]] = field(default_factory=list)
    tool_call_id: str | None = None


@dataclass(frozen=True)
class PeekInterrupt:
    value: object
    id: str


@dataclass(frozen=True)
class PeekState:
    """The parts of LangGraph's ``StateSnapshot`` that the resume planner reads.

    ``next`` lists the same nodes as ``get_state``, not necessarily in its order."""

    values: dict[str, object]
    next: tuple[str, ...]
    interrupts: tuple[PeekInterrupt, ...]


@dataclass(frozen=True)
class _Opaque:
    """A decoded extension the planner never reads (a datetime, a UUID, …)."""

    code: int
    args: object


def peek_state(db_path: Path, thread_id: str) -> PeekState | None:
    """The newest checkpoint of ``thread_id`` as ``get_state`` would show it, or ``None``
    when the file, the thread or the format is not one this reader is sure about."""
    try:
        found = newest_checkpoint(db_path, thread_id)
        return None if found is None else _state(*found)
    except Exception:  # Unrecognised, an SQL error, a blob that does not decode, a
        return None  # missing module: LangGraph decides what it means


def _state(row: CheckpointRow, writes: list[WriteRow],
           stored: list[tuple[str, bytes]]) -> PeekState:
    checkpoint_id, type_, blob, metadata = row
    if type_ != "msgpack":
        raise Unrecognised(f"checkpoint type {type_!r}")
    ckpt = _unpack(blob)
    if not isinstance(ckpt, dict) or ckpt.get("v") != CHECKPOINT_VERSION:
        raise Unrecognised("checkpoint version")
    if checkpoint_id != ckpt.get("id"):
        raise Unrecognised("checkpoint id")
    values_in = ckpt.get("channel_values")
    versions, seen = ckpt.get("channel_versions"), ckpt.get("versions_seen")
    if not (isinstance(values_in, dict) and isinstance(versions, dict)
            and isinstance(seen, dict)):  # fmt: skip
        raise Unrecognised("checkpoint layout")
    if REFS in values_in:  # the messages are stored apart (``checkpoint_messages``)
        values_in = {k: v for k, v in values_in.items() if k != REFS}
        values_in["messages"] = [_load(type_, value) for type_, value in stored]
    meta = json.loads(metadata) if metadata is not None else {}
    step = meta.get("step", -1) if isinstance(meta, dict) else None
    if not isinstance(step, int):
        raise Unrecognised("metadata")
    values, triggers = _channels(values_in, versions)
    tasks = _tasks(checkpoint_id, step + 1, triggers, versions, seen)
    interrupts = _writes(writes, tasks)
    messages = values.get("messages", [])
    if not (isinstance(messages, list) and all(isinstance(m, PeekMessage) for m in messages)):
        raise Unrecognised("messages")
    # what the planner copies into its plan must be what LangGraph would give it
    if not all(_plain(x) for x in (values.get("approval_requests"),
                                   values.get("needs_human_approval"),
                                   *(i.value for i in interrupts))):  # fmt: skip
        raise Unrecognised("an object where the planner expects data")
    return PeekState(values=values, next=tuple(tasks.values()), interrupts=interrupts)


def _channels(
    channel_values: dict[str, object], versions: dict[str, object]
) -> tuple[dict[str, object], dict[str, str]]:
    """The state values, and ``{node: trigger channel}`` of every set trigger."""
    values: dict[str, object] = {}
    triggers: dict[str, str] = {}
    for name in {*channel_values, *versions}:
        if not isinstance(name, str):
            raise Unrecognised("channel name")
        if name == START:
            if name in channel_values:
                triggers[START] = START
        elif name.startswith(BRANCH):
            if name in channel_values:
                if channel_values[name] is not None:  # a deferred node's channel
                    raise Unrecognised(f"channel {name!r}")
                triggers[name[len(BRANCH):]] = name
        elif name == TASKS:
            if channel_values.get(name):  # Send tasks: not in this graph
                raise Unrecognised("pending sends")
        elif name.startswith("__") or ":" in name:  # a join, a delta snapshot, …
            raise Unrecognised(f"channel {name!r}")
        elif name in channel_values:
            values[name] = channel_values[name]
        else:  # written but not stored: a delta channel, rebuilt from older writes
            raise Unrecognised(f"channel {name!r} has no value")
    return values, triggers


def _tasks(checkpoint_id: str, step: int, triggers: dict[str, str],
           versions: dict[str, object], seen: dict[str, object]) -> dict[str, str]:
    """``{task id: node}`` of the nodes the checkpoint triggers (``prepare_next_tasks``)."""
    if not versions:
        return {}
    if not all(isinstance(v, str) for v in versions.values()):
        raise Unrecognised("channel version type")
    from xxhash import xxh3_128_hexdigest

    id_bytes = binascii.unhexlify(checkpoint_id.replace("-", ""))
    tasks: dict[str, str] = {}
    for node, chan in sorted(triggers.items()):
        node_seen = seen.get(node)
        if node_seen is not None:
            if not (isinstance(node_seen, dict)
                    and all(isinstance(v, str) for v in node_seen.values())):  # fmt: skip
                raise Unrecognised("versions_seen")
            if not versions.get(chan, "") > node_seen.get(chan, ""):  # "" = never seen
                continue
        parts = (node, str(step), node, PULL, chan)  # namespace, step, name, kind, triggers
        h = xxh3_128_hexdigest(id_bytes + "".join(parts).encode())
        tasks[f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"] = node
    return tasks


def _writes(writes: list[WriteRow], tasks: dict[str, str]) -> tuple[PeekInterrupt, ...]:
    """The pending interrupts; a finished task, or a write of no task here, is refused."""
    found: dict[str, list[PeekInterrupt]] = {}
    for task_id, channel, type_, value, _path, _idx in sorted(
            writes, key=lambda w: (w[4], w[0], w[5])):  # fmt: skip  (``writes_sort_key``)
        decoded = _load(type_, value)  # every write, as LangGraph loads every write
        if task_id == NULL_TASK:
            if channel not in CONTROL:  # input writes would change the state
                raise Unrecognised(f"null write to {channel!r}")
            continue
        if task_id not in tasks:
            raise Unrecognised("a write of an unknown task")
        if channel not in CONTROL:
            raise Unrecognised("a finished task")  # its writes would change the state
        if channel == INTERRUPT:
            items = decoded if isinstance(decoded, list) else [decoded]
            interrupts = [i for i in items if isinstance(i, PeekInterrupt)]
            if len(interrupts) != len(items):
                raise Unrecognised("interrupt")
            found.setdefault(task_id, []).extend(interrupts)
    if len(found) > 1:  # their order would follow the graph's node order
        raise Unrecognised("interrupts of several tasks")
    return tuple(i for items in found.values() for i in items)


def _load(type_: str, value: bytes) -> object:
    if type_ in PLAIN_TYPES:
        return None
    if type_ != "msgpack":
        raise Unrecognised(f"write type {type_!r}")
    return _unpack(value)


def _unpack(data: bytes) -> object:
    import ormsgpack

    return ormsgpack.unpackb(data, ext_hook=_ext, option=ormsgpack.OPT_NON_STR_KEYS)


def _ext(code: int, data: bytes) -> object:
    """Extensions as ``JsonPlusSerializer`` writes them: messages and interrupts are
    read; other known constructors stay opaque; anything else is refused."""
    if code not in KNOWN_EXT:
        raise Unrecognised(f"msgpack extension {code}")
    tup = _unpack(data)
    if not isinstance(tup, list) or len(tup) < 3:
        raise Unrecognised("extension payload")
    module, name, args = tup[0], tup[1], tup[2]
    if code == EXT_PYDANTIC_V2 and str(module).startswith("langchain_core.messages"):
        return _message(str(name), args)
    if code == EXT_KW_ARGS and (module, name) == ("langgraph.types", "Interrupt"):
        if not (isinstance(args, dict) and {"value", "id"} <= set(args) <= INTERRUPT_FIELDS
                and isinstance(args["id"], str)):  # fmt: skip
            raise Unrecognised("interrupt fields")
        return PeekInterrupt(value=args["value"], id=args["id"])
    return _Opaque(code, args)


def _message(name: str, fields: object) -> PeekMessage:
    kind = MESSAGE_TYPES.get(name)
    if kind is None or not isinstance(fields, dict) or fields.get("type") != kind:
        raise Unrecognised(f"message {name}")
    mid = fields.get("id")
    if mid is not None and not isinstance(mid, str):
        raise Unrecognised("message id")
    if kind == "tool":
        call_id = fields.get("tool_call_id")
        if not isinstance(call_id, str):
            raise Unrecognised("tool_call_id")
        return PeekMessage(mid, kind, tool_call_id=call_id)
    if kind != "ai":
        return PeekMessage(mid, kind)
    calls = fields.get("tool_calls") or []
    if not calls and not fields.get("invalid_tool_calls") and (
            fields.get("additional_kwargs") or {}).get("tool_calls"):  # fmt: skip
        raise Unrecognised("raw tool calls")  # LangChain would parse them on load
    if not isinstance(calls, list):
        raise Unrecognised("tool_calls")
    for call in calls:
        if not (isinstance(call, dict) and isinstance(call.get("id"), str)
                and isinstance(call.get("name"), str) and isinstance(call.get("args"), dict)
                and _plain(call["args"])):  # fmt: skip
            raise Unrecognised("tool call")
    return PeekMessage(mid, kind, tool_calls=[
        {"name": c["name"], "args": c["args"], "id": c["id"], "type": "tool_call"}
        for c in calls])  # fmt: skip


def _plain(value: object) -> bool:
    """JSON-like data only: nothing LangGraph would have turned into an object."""
    if isinstance(value, dict):
        return all(_plain(v) for v in value.values())
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return not isinstance(value, _Opaque | PeekMessage | PeekInterrupt)

