"""A cautious reader of bash command lines, for permission rules.

It finds the simple commands bash would run: it knows ``#`` comments, ``'…'``,
``"…"``, ``$'…'`` and ``$"…"`` quoting, backslashes and line continuations,
here-documents, ``{ }`` groups, ``( )`` subshells, ``$( )``, backticks, ``<( )``,
``if``/``while`` keywords, and the control operators. What it does not fully
understand (``case``, ``for``, ``[[ ]]``, ``(( ))``, function definitions, unusual
``${…}``, a syntax error …) makes the result *unsure*: an unsure command never
matches an allow rule. The command texts it returns keep what was written, with
comments, continuations and here-document bodies left out and substitutions shown
as ``$(…)`` (their commands are commands of their own).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from .shell_quotes import Unsure, ansi_c, arithmetic, backtick, braced

_META = " \t\n;&|()<>"
_OPERATORS = (";;&", ";;", ";&", "&&", "||", "|&", ";", "&", "|")
_REDIRECTS = ("&>>", "&>", "<<<", "<<-", "<<", "<>", "<&", ">>", ">|", ">&", "<", ">")
_OUTPUT = ("&>>", "&>", "<>", ">>", ">|", ">&", ">")
# keywords that only shape the flow; the commands between them are read as usual
_FLOW = {"if", "then", "elif", "else", "while", "until", "do", "!"}
_CLOSING = {"fi", "done"}
# keywords whose grammar is not followed here: the command becomes unsure
_UNSURE = {"case", "esac", "for", "select", "in", "function", "coproc", "[[", "]]", "((",
           "}", "{"}
_PARAM = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]")
_MAX_DEPTH = 40


@dataclass
class Word:
    raw: str  # as written (continuations removed, substitutions as $(…))
    value: str | None  # after quote removal; None when it has an expansion


@dataclass
class Command:
    """One simple command."""

    words: list[Word] = field(default_factory=list)
    writes: bool = False  # an output redirection
    pieces: list[str] = field(default_factory=list)  # words and redirections as written
    start: int = 0  # where it starts in the text (substitutions' commands come first)

    @property
    def text(self) -> str:
        return " ".join(self.pieces)


@dataclass
class ParsedShell:
    commands: list[Command]
    sure: bool
    why: str = ""  # what made it unsure


@lru_cache(maxsize=32)  # one call is read for every rule: read it once (never mutated)
def parse_shell(source: str) -> ParsedShell:
    """The simple commands of ``source``, and whether it was fully understood."""
    reader = _Reader(source)
    try:
        reader.parse_list("")
    except (Unsure, RecursionError) as exc:
        return ParsedShell(reader.commands, False, str(exc) or "too deeply nested")
    return ParsedShell(reader.commands, True)


class _Reader:
    def __init__(self, source: str, depth: int = 0) -> None:
        self.s, self.i, self.n = source, 0, len(source)
        self.commands: list[Command] = []
        self.heredocs: list[tuple[str, bool, bool]] = []  # delimiter, quoted, strip tabs
        self.depth = depth

    # -- lists ---------------------------------------------------------------------
    def parse_list(self, end: str) -> None:
        """Commands up to ``end`` (``)`` of a subshell or ``$(``, ``}`` of a group, or
        the end of the text)."""
        if self.depth > _MAX_DEPTH:
            raise Unsure("too deeply nested")
        last = "start"  # start | command | sep | join
        while True:
            self._blanks()
            if self.i >= self.n:
                if end or last == "join":
                    raise Unsure("the command is not complete")
                if self.heredocs:
                    raise Unsure("a here-document has no end")
                return
            c = self.s[self.i]
            if c == "\n":
                self._newline()
                if last != "join":
                    last = "start"
                continue
            if c == ")" and end == ")":
                if last in ("join", "start") and not self.commands:
                    raise Unsure("an empty subshell")
                if last == "join":
                    raise Unsure("the command is not complete")
                self.i += 1
                return
            op = next((o for o in _OPERATORS if self.s.startswith(o, self.i)), "")
            if op and not self.s.startswith("&>", self.i):
                if op.startswith(";;") or op == ";&":
                    raise Unsure("case")
                if last != "command":
                    raise Unsure(f"a syntax error at {op}")
                self.i += len(op)
                last = "join" if op in ("&&", "||", "|", "|&") else "sep"
                continue
            if last == "command":
                raise Unsure("a syntax error")
            state = self._command(end)
            if state == "close":
                if last == "join":
                    raise Unsure("the command is not complete")
                return
            last = state

    def _command(self, end: str) -> str:
        """One simple or compound command; ``command``, ``start`` after a keyword that
        expects a command, or ``close`` at the ``}`` that ends a group."""
        if self.s.startswith("((", self.i):
            raise Unsure("arithmetic command")
        if self.s[self.i] == "(":
            self.i += 1
            self._nested(")")
            self._after_compound()
            return "command"
        start = self.i
        word = self._word()
        if word is None:
            return self._simple(Command(start=self.i))  # starts with a redirection
        if word.raw == word.value:
            if word.raw == "}" and end == "}":
                return "close"
            if word.raw == "{" and self._blank_next():
                self._nested("}")
                self._after_compound()
                return "command"
            if word.raw in _FLOW:
                return "start"
            if word.raw in _CLOSING:
                self._after_compound()
                return "command"
            if word.raw in _UNSURE:
                raise Unsure(f"{word.raw} is not followed here")
        self.i = start
        return self._simple(Command(start=start))

    def _nested(self, end: str) -> None:
        inner = _Reader(self.s, self.depth + 1)
        inner.i, inner.heredocs = self.i, self.heredocs
        inner.parse_list(end)
        self.commands.extend(inner.commands)
        self.i = inner.i

    def _blank_next(self) -> bool:
        return self.i >= self.n or self.s[self.i] in " \t\n"

    def _after_compound(self) -> None:
        """Redirections after ``)``, ``}``, ``fi``, ``done``: an output one makes a
        command of its own that writes (so no allow rule matches)."""
        tail = Command()
        while True:
            self._blanks()
            if not self._redirect(tail):
                break
        if tail.pieces:
            self.commands.append(tail)

    def _simple(self, cmd: Command) -> str:
        while True:
            self._blanks()
            if self.i >= self.n:
                break
            c = self.s[self.i]
            substitution = self.s.startswith(("<(", ">("), self.i)
            if c == "(":
                raise Unsure("a function definition or a stray (")
            if not substitution and self._redirect(cmd):
                continue
            if c in _META and not substitution:
                break
            word = self._word()
            if word is None:
                break
            if re.fullmatch(r"\d+|\{[A-Za-z_]\w*\}", word.raw) and self.s[self.i:self.i + 1] in (
                    "<", ">") and not self.s.startswith(("<(", ">("), self.i):
                self._redirect(cmd, prefix=word.raw)  # 2>file: a file descriptor
                continue
            if word.raw.endswith("=") and self.s[self.i:self.i + 1] == "(":
                raise Unsure("an array assignment")
            cmd.words.append(word)
            cmd.pieces.append(word.raw)
        if not cmd.pieces:
            raise Unsure("a syntax error")
        self.commands.append(cmd)
        return "command"

    # -- redirections and here-documents ---------------------------------------------
    def _redirect(self, cmd: Command, prefix: str = "") -> bool:
        if self.s.startswith(("<(", ">("), self.i):
            return False
        op = next((r for r in _REDIRECTS if self.s.startswith(r, self.i)), "")
        if not op:
            if prefix:
                raise Unsure("a syntax error")
            return False
        self.i += len(op)
        self._blanks()
        target = self._word()
        if target is None:
            raise Unsure(f"{op} without a target")
        if op in ("<<", "<<-"):
            if target.value is None:
                raise Unsure("a here-document delimiter with an expansion")
            quoted = any(q in target.raw for q in "'\"\\")
            self.heredocs.append((target.value, quoted, op == "<<-"))
        dup = op in (">&", "<&") and re.fullmatch(r"\d*-?", target.value or "x") is not None
        if op in _OUTPUT and not dup:
            cmd.writes = True
        cmd.pieces.append(f"{prefix}{op}{target.raw}")
        return True

    def _newline(self) -> None:
        self.i += 1
        if self.heredocs and self.depth:
            raise Unsure("a here-document inside a substitution")
        for delimiter, quoted, strip in self.heredocs:
            while True:
                if self.i >= self.n:
                    raise Unsure("a here-document has no end")
                j = self.s.find("\n", self.i)
                j = self.n if j < 0 else j
                line = self.s[self.i:j]
                self.i = min(j + 1, self.n)
                if (line.lstrip("\t") if strip else line) == delimiter:
                    break
                if not quoted and any(t in line for t in ("$(", "`", "${", "$[", "\\")):
                    raise Unsure("a here-document that expands a substitution")
        self.heredocs.clear()

    # -- words ---------------------------------------------------------------------
    def _blanks(self) -> None:
        """Skip blanks, line continuations and a comment (up to its newline)."""
        while self.i < self.n:
            c = self.s[self.i]
            if c in " \t":
                self.i += 1
            elif self.s.startswith("\\\n", self.i):
                self.i += 2
            elif c == "#":
                j = self.s.find("\n", self.i)
                self.i = self.n if j < 0 else j
            else:
                return

    def _word(self) -> Word | None:
        raw: list[str] = []
        val: list[str] = []
        literal = True
        s = self.s
        while self.i < self.n:
            c = s[self.i]
            if c in "<>" and s.startswith("(", self.i + 1):
                self.i += 2
                self._nested(")")
                raw.append(c + "(…)")
                literal = False
                continue
            if c in _META:
                break
            if c == "\\":
                nxt = s[self.i + 1:self.i + 2]
                self.i += 2
                if nxt != "\n":
                    raw.append("\\" + nxt)
                    val.append(nxt)
            elif c == "'":
                j = s.find("'", self.i + 1)
                if j < 0:
                    raise Unsure("an unclosed '")
                raw.append(s[self.i:j + 1])
                val.append(s[self.i + 1:j])
                self.i = j + 1
            elif c == '"':
                literal = self._double(raw, val) and literal
            elif c == "$" and s.startswith("$'", self.i):
                self._ansi_c(raw, val)
            elif c == "$" and s.startswith('$"', self.i):
                raw.append("$")
                self.i += 1
                literal = self._double(raw, val) and literal
            elif c == "$":
                literal = self._dollar(raw, val) and literal
            elif c == "`":
                self._backtick(raw)
                literal = False
            else:
                raw.append(c)
                val.append(c)
                self.i += 1
        if not raw:
            return None
        return Word("".join(raw), "".join(val) if literal else None)

    def _double(self, raw: list[str], val: list[str]) -> bool:
        s, literal = self.s, True
        raw.append('"')
        self.i += 1
        while True:
            if self.i >= self.n:
                raise Unsure('an unclosed "')
            c = s[self.i]
            if c == '"':
                raw.append(c)
                self.i += 1
                return literal
            if c == "\\":
                nxt = s[self.i + 1:self.i + 2]
                self.i += 2
                if nxt == "\n":
                    continue
                raw.append("\\" + nxt)
                val.append(nxt if nxt in '$`"\\' else "\\" + nxt)
            elif c == "$" and not s.startswith(("$'", '$"'), self.i):
                literal = self._dollar(raw, val) and literal
            elif c == "`":
                self._backtick(raw)
                literal = False
            else:
                raw.append(c)
                val.append(c)
                self.i += 1

    def _ansi_c(self, raw: list[str], val: list[str]) -> None:
        value, end = ansi_c(self.s, self.i)
        raw.append(self.s[self.i:end])
        val.append(value)
        self.i = end

    def _dollar(self, raw: list[str], val: list[str]) -> bool:
        """``$…`` at ``self.i``; ``False`` when it expands to something."""
        s = self.s
        if s.startswith("$((", self.i):
            end = arithmetic(s, self.i)
            raw.append(s[self.i:end])
            self.i = end
            return False
        if s.startswith("$(", self.i):
            self.i += 2
            self._nested(")")
            raw.append("$(…)")
            return False
        if s.startswith("${", self.i):
            end = braced(s, self.i)
            raw.append(s[self.i:end])
            self.i = end
            return False
        if s.startswith("$[", self.i):
            raise Unsure("a $[…] expansion")
        name = _PARAM.match(s, self.i + 1)
        if name:
            raw.append(s[self.i:name.end()])
            self.i = name.end()
            return False
        raw.append("$")
        val.append("$")
        self.i += 1
        return True

    def _backtick(self, raw: list[str]) -> None:
        body, end = backtick(self.s, self.i)
        inner = _Reader(body, self.depth + 1)
        inner.parse_list("")
        for cmd in inner.commands:
            cmd.start += self.i + 1  # where the body starts in this text
        self.commands.extend(inner.commands)
        raw.append("`…`")
        self.i = end
