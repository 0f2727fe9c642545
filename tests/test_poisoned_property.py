"""Generated poison: random JSON of the wrong shape in every field of every record type."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mttui.core.resume_check import check as resume_check
from mttui.session.record_check import FIELDS, checked
from mttui.session.record_types import RECORD_TYPES
from mttui.session.service import SessionService
from mttui.session.transcript import fold
from tests.support.logs import message, new_session
from tests.support.poison import append_raw

_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8),
)  # fmt: skip
_json = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
_field_names = st.sampled_from(sorted(FIELDS))
_nested = st.dictionaries(  # objects that look like messages and calls, with wrong values
    st.sampled_from(["id", "role", "content", "tool_calls", "call_id", "tool_name",
                     "arguments", "args", "name", "usage", "status", "attachments"]),
    _json, max_size=6,
)  # fmt: skip
_record = st.tuples(
    st.sampled_from(sorted(RECORD_TYPES)),
    st.dictionaries(_field_names, st.one_of(_json, _nested, st.lists(_nested, max_size=3))),
)


def _well_typed(rec: dict[str, Any]) -> None:
    again, bad = checked(rec)
    assert bad == [] and again == rec, (rec, bad)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(poison=st.lists(_record, min_size=1, max_size=4))
def test_random_wrong_shapes_never_escape_the_reader(
    svc: SessionService, poison: list[tuple[str, dict[str, Any]]]
) -> None:
    w = new_session(svc, [message("m1", "user", "survivor")])
    lines = []
    for i, (type_, fields) in enumerate(poison):
        rec = {**fields, "type": type_, "seq": 3 + i, "session_id": w.session_id}
        lines.append(json.dumps(rec).encode())
    append_raw(w.path, *lines)
    records, stats = svc.records(w.session_id)
    for rec in records:
        _well_typed(dict(rec))
    t = fold(records)
    assert any(m.get("content") == "survivor" for m in t.messages)
    assert svc.history(w.session_id).messages[0].content == "survivor"
    list(svc.export(w.session_id, "jsonl"))
    list(svc.export(w.session_id, "markdown"))
    resume_check(svc, w.session_id)
    assert stats.records >= 2
