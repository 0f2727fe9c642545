"""The reader's list of known record types is the record contract's, spelt out."""

from __future__ import annotations

from mttui.session.record_types import RECORD_TYPES
from mttui.session.records import KNOWN_TYPES


def test_known_types_are_exactly_the_contracts() -> None:
    assert set(RECORD_TYPES) == KNOWN_TYPES
