"""Pasted text stays one paste: escape sequences inside a bracketed paste are removed
before Textual's parser could re-issue them as keys (a pasted line break as Enter)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from textual import events

from mttui.paste_guard import END, START, PasteGuard, clean
from mttui.terminal_driver import GuardedParser

HOSTILE = "a\x1b[31mred\x1b[0m\nline two \x1b\x1b1 \x1b]0;title\x07tail\x1b"


def test_outside_a_paste_keys_pass_untouched() -> None:
    keys = "ab\x1b[A\x1b\x1bx\r\x1b[200"  # arrows, escape, alt+x, enter, half a marker
    assert PasteGuard().filter(keys) == keys


def test_a_paste_loses_its_escape_sequences_and_keeps_its_text() -> None:
    out = PasteGuard().filter(f"x{START}{HOSTILE}{END}y")
    assert out == f"x{START}ared\nline two  tail{END}y"
    inner = out[len("x" + START):-len(END + "y")]
    assert "\x1b" not in inner
    assert clean("\x1b[1;31mbold\x1b[0m and \x1b(B plain") == "bold and  plain"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=200), max_size=12),
       st.text(alphabet="ab\n\x1b[]0123;~m\x07", max_size=60))
def test_any_split_into_reads_gives_the_same_stream(cuts: list[int], body: str) -> None:
    stream = f"k\x1b[B{START}{body}{END}z{START}{body[::-1]}{END}"
    whole = PasteGuard()
    expected = whole.filter(stream) + whole.flush()
    guard, got, last = PasteGuard(), [], 0
    for cut in sorted(c % (len(stream) + 1) for c in cuts):
        got.append(guard.filter(stream[last:cut]))
        last = cut
    got.append(guard.filter(stream[last:]) + guard.flush())
    assert "".join(got) == expected
    assert not guard.inside


def test_the_parser_reads_a_hostile_paste_as_one_paste_and_no_keys() -> None:
    parser = GuardedParser()
    stream = f"{START}{HOSTILE}{END}"
    tokens = []
    for i in range(0, len(stream), 7):  # in small reads, as a slow terminal sends them
        tokens += list(parser.feed(stream[i:i + 7]))
    tokens += list(parser.feed("q"))
    keys = [t.key for t in tokens if isinstance(t, events.Key)]
    pastes = [t.text for t in tokens if isinstance(t, events.Paste)]
    assert pastes == ["ared\nline two  tail"]
    assert keys == ["q"]  # typed after the paste; nothing from inside it


def _keys(parser: GuardedParser, *reads: str) -> list[str]:
    return [t.key for r in reads for t in parser.feed(r) if isinstance(t, events.Key)]


def test_a_line_feed_typed_before_raw_mode_is_enter_and_later_ones_stay_ctrl_j() -> None:
    # "hé\n" typed ahead is 4 bytes (é is two); what follows was typed in raw mode.
    parser = GuardedParser(early=4)
    assert _keys(parser, "h", "é\nx\n") == ["h", "é", "enter", "x", "ctrl+j"]
    assert _keys(GuardedParser(), "a\n") == ["a", "ctrl+j"]
