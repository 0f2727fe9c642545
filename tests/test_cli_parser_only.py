"""The parser that describes only the command being run (start-up time) parses, helps
and fails exactly as the full one: same namespace, same output, same exit code."""

from __future__ import annotations

import argparse
import contextlib
import io

import pytest

from mttui.cli.parser import build_parser, command_of


def _parse(parser: argparse.ArgumentParser, argv: list[str]) -> tuple[object, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            args, extra = parser.parse_known_args(argv)
            result: object = (sorted(vars(args).items()), extra)
        except SystemExit as exc:
            result = ("exit", exc.code)
    return result, out.getvalue(), err.getvalue()


def _commands() -> list[str]:
    sub = next(a for a in build_parser()._actions  # noqa: SLF001 - the test reads argparse
               if isinstance(a, argparse._SubParsersAction))  # noqa: SLF001
    return sorted(sub.choices)


CASES = [
    [], ["-c"], ["--resume"], ["-r", "abc"], ["--help"], ["--version"], ["bogus"],
    ["--project", "/tmp", "search", "q"], ["search", "q", "--limit", "5", "--json"],
    ["search", "-x"], ["search", "--limit", "0", "q"], ["search", "a", "--session", "s",
                                                         "--all-projects"],
    ["sessions", "--bogus"], ["history", "S", "--around", "3"], ["queue", "list", "S"],
    ["queue"], ["permissions", "revoke", "R"], ["rewind", "S", "--code", "--dry-run"],
    ["ledger", "S", "c1", "rerun"], ["exec", "hi", "--approve", "all"], ["mcp", "--json"],
    ["export", "S", "--format", "pdf"], ["demo", "--reset"], ["search", "--", "-q"],
]


@pytest.mark.parametrize("argv", CASES + [[name, "--help"] for name in _commands()]
                         + [[name] for name in _commands()])
def test_only_the_command_parses_as_the_full_parser(argv: list[str]) -> None:
    full = _parse(build_parser(), argv)
    assert _parse(build_parser(only=command_of(argv)), argv) == full


def test_command_of() -> None:
    assert command_of([]) == ""
    assert command_of(["search", "q"]) == "search"
    assert command_of(["--project", "d", "search"]) is None
