"""The pieces that keep a hostile MCP server from breaking a turn, on their own: the
aliases of invalid tool names, the bounded line reader of a server's stdout, the
``timeout`` of a server's config."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mttui.config import ConfigError, load_settings
from mttui.graph.mcp.names import aliases, shown
from mttui.graph.mcp.stdio import LineReader, oversize_id

VALID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
ODD = ["repo.search", "esc\x1b[0m", "a\nb", "with space", "a/b", "x" * 200, "naïve",
       "repo_search", "repo-search", "", "\ud800"]


def test_aliases_are_valid_unique_and_independent_of_order() -> None:
    pairs = [("repo", t) for t in ODD] + [("s" * 100, "tool"), ("s" * 100, "tool.2")]
    out = aliases(pairs)
    assert all(VALID.match(a) for a in out.values()), out
    assert len(set(out.values())) == len(out)
    assert out[("repo", "repo_search")] == "mcp__repo__repo_search"  # valid: kept
    assert out[("repo", "repo.search")].startswith("mcp__repo__repo_search_")
    assert aliases(reversed(pairs)) == out
    assert aliases(pairs[:1]) == {pairs[0]: out[pairs[0]]}  # not made by the others


def test_an_alias_clash_is_resolved() -> None:
    first = aliases([("s", "a.b")])[("s", "a.b")]
    taken = first[len("mcp__s__"):]  # a tool whose real name is that alias
    out = aliases([("s", "a.b"), ("s", taken)])
    assert out[("s", taken)] == first and out[("s", "a.b")] != first
    assert VALID.match(out[("s", "a.b")])


def test_shown_escapes_controls() -> None:
    assert shown("esc\x1b[0m\nx\u202e") == "esc\\x1b[0m\\x0ax\\u202e"
    assert shown("naïve.search") == "naïve.search"


def test_the_line_reader_skips_a_long_line_as_it_comes() -> None:
    reader = LineReader(limit=1000)
    out = reader.feed(b'{"a":1}\n{"jsonrpc":"2.0","id":7,"result":"')
    for _ in range(100):
        out += reader.feed(b"y" * 10_000)
        assert len(reader.buffer) <= 1000 and len(reader.tail) <= 512
    out += reader.feed(b'"}\n{"b":2}\npartial')
    assert [k for k, _ in out] == ["line", "oversize", "line"]
    assert out[0][1] == b'{"a":1}' and out[2][1] == b'{"b":2}'
    assert oversize_id(out[1][1]) == 7
    assert reader.feed(b"!\n") == [("line", b"partial!")]


def test_the_id_of_a_long_message_is_found_at_its_end_too() -> None:
    reader = LineReader(limit=100)
    out = reader.feed(b'{"result":{"x":"' + b"z" * 500 + b'"},"jsonrpc":"2.0","id":"r-9"}\n')
    assert oversize_id(out[0][1]) == "r-9"
    assert oversize_id(b"garbage\nmore garbage") is None


@pytest.mark.parametrize("value", ['"soon"', "0", "-1", "true"])
def test_a_bad_timeout_is_a_config_error(tmp_path: Path, value: str) -> None:
    config = tmp_path / "c.toml"
    config.write_text(f'[mcp_servers.x]\ncommand = "y"\ntimeout = {value}\n')
    with pytest.raises(ConfigError, match="timeout"):
        load_settings({}, {}, config)


def test_timeout_defaults_to_120(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text('[mcp_servers.x]\ncommand = "y"\n[mcp_servers.z]\ncommand = "y"\n'
                      "timeout = 1.5\n")
    servers = load_settings({}, {}, config).mcp_servers
    assert servers["x"]["timeout"] == 120 and servers["z"]["timeout"] == 1.5
