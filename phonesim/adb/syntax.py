"""Command-line syntax of the device shell (`/system/bin/sh -c`, Android's mksh), for the subset
adb clients send: words with POSIX quoting (`'…'`, `"…"`, `\\`), parameters (`$?`, `$NAME`,
`${NAME}`), globs, `NAME=value` assignments, redirections (`>`, `>>`, `<`, `2>`, `2>&1`, `&>`) and
command lists joined by `;`, `&`, newlines, `&&`, `||` and pipes.

A tokenizer of its own rather than `shlex`: the shell needs to know which characters were quoted
(`echo '&'` is a word, `echo &` an operator; `'$?'` is literal, `"$?"` expands; `'*'` does not
glob), which `shlex` does not report. Compound commands, subshells and command substitution
(`if`, `for`, `( … )`, `$( … )`, backquotes) are refused with a syntax error, not half-run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

OPERATOR_CHARS = ";&|<>\n"
OPERATORS = ("&&", "||", ">>", "&>", ">&", "<&", ";", "&", "|", "<", ">", "\n")  # longest first
REDIRECTIONS = (">", ">>", "<", ">&", "<&", "&>")
RESERVED = ("if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
            "function", "select", "{", "}", "[[", "]]", "!")
SPECIAL_PARAMETERS = "?$#!@*-0"


class ShellSyntaxError(ValueError):
    """A command line the shell cannot parse; the message is what mksh prints after its name."""


@dataclass(frozen=True)
class Part:
    """A piece of a word: literal text, or a parameter (`$NAME`) when `parameter` is set."""

    text: str
    quoted: bool = False
    parameter: bool = False


@dataclass(frozen=True)
class Word:
    parts: tuple[Part, ...]

    @property
    def literal(self) -> str:
        """The text with no expansion (operator words, assignment names)."""
        return "".join(p.text for p in self.parts if not p.parameter)


@dataclass(frozen=True)
class Redirect:
    fd: int  # the redirected descriptor: 0 stdin, 1 stdout, 2 stderr
    op: str  # one of REDIRECTIONS
    target: Word


@dataclass
class SimpleCommand:
    assignments: list[tuple[str, Word]] = field(default_factory=list)
    words: list[Word] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class AndOr:
    """One pipeline of a command list and how it joins the previous one (`;`, `&&`, `||`)."""

    connector: str
    pipeline: list[SimpleCommand]


def _operator(line: str, i: int) -> str:
    return next(op for op in OPERATORS if line.startswith(op, i))


def tokenize(line: str) -> list[Word | str]:
    """Words and operators (operators as plain strings). A digit word directly before `<`/`>`
    is kept as a one-element string tuple marker: `("2",)` (the descriptor of a redirection)."""
    tokens: list = []
    parts: list[Part] = []
    literal: list[str] = []
    in_word = False
    i, n = 0, len(line)

    def flush_literal(quoted: bool = False) -> None:
        if literal:
            parts.append(Part("".join(literal), quoted))
            literal.clear()

    def end_word() -> None:
        nonlocal in_word
        flush_literal()
        if in_word:
            tokens.append(Word(tuple(parts)))
        parts.clear()
        in_word = False

    while i < n:
        char = line[i]
        if char in " \t":
            end_word()
            i += 1
        elif char == "#" and not in_word:
            while i < n and line[i] != "\n":
                i += 1
        elif char in OPERATOR_CHARS:
            if char in "<>" and in_word and not parts and literal and "".join(literal).isdigit():
                fd = "".join(literal)
                literal.clear()
                in_word = False
                tokens.append((fd,))
            else:
                end_word()
            op = _operator(line, i)
            tokens.append(op)
            i += len(op)
        elif char == "'":
            flush_literal()
            end = line.find("'", i + 1)
            if end < 0:
                raise ShellSyntaxError("no closing quote")
            parts.append(Part(line[i + 1:end], quoted=True))
            in_word, i = True, end + 1
        elif char == '"':
            flush_literal()
            i = _double_quoted(line, i + 1, parts)
            in_word = True
        elif char == "\\":
            flush_literal()
            if i + 1 < n and line[i + 1] == "\n":
                i += 2
                continue
            parts.append(Part(line[i + 1:i + 2], quoted=True))
            in_word, i = True, i + 2
        elif char == "$":
            flush_literal()
            i = _parameter(line, i, parts, quoted=False)
            in_word = True
        elif char == "`" or char in "()":
            raise ShellSyntaxError(f"syntax error: '{char}' unexpected (phonesim serves no subshells or "
                                   "command substitution)")
        else:
            literal.append(char)
            in_word, i = True, i + 1
    end_word()
    return tokens


def _double_quoted(line: str, i: int, parts: list[Part]) -> int:
    """Read a double-quoted string from after its opening quote; return the index after it."""
    literal: list[str] = []
    while i < len(line):
        char = line[i]
        if char == '"':
            parts.append(Part("".join(literal), quoted=True))
            return i + 1
        if char == "\\" and i + 1 < len(line) and line[i + 1] in '$`"\\\n':
            if line[i + 1] != "\n":
                literal.append(line[i + 1])
            i += 2
        elif char == "$":
            parts.append(Part("".join(literal), quoted=True))
            literal = []
            i = _parameter(line, i, parts, quoted=True)
        elif char == "`":
            raise ShellSyntaxError("syntax error: '`' unexpected (phonesim serves no command substitution)")
        else:
            literal.append(char)
            i += 1
    raise ShellSyntaxError("no closing quote")


def _parameter(line: str, i: int, parts: list[Part], quoted: bool) -> int:
    """Read `$NAME`, `${NAME}` or `$?` at index i (the `$`); return the index after it."""
    rest = line[i + 1:]
    if rest.startswith("("):
        raise ShellSyntaxError("syntax error: '(' unexpected (phonesim serves no command substitution)")
    if rest.startswith("{"):
        end = rest.find("}")
        if end < 0:
            raise ShellSyntaxError("syntax error: missing '}'")
        name = rest[1:end]
        if not (name in tuple(SPECIAL_PARAMETERS) or name.replace("_", "a").isalnum()):
            raise ShellSyntaxError(f"${{{name}}}: bad substitution")
        parts.append(Part(name, quoted, parameter=True))
        return i + 2 + end
    if rest[:1] and rest[0] in SPECIAL_PARAMETERS:
        parts.append(Part(rest[0], quoted, parameter=True))
        return i + 2
    length = 0
    while length < len(rest) and (rest[length] == "_" or rest[length].isalnum()):
        length += 1
    if length == 0 or rest[0].isdigit():
        parts.append(Part("$", quoted))  # a lone `$` is literal
        return i + 1
    parts.append(Part(rest[:length], quoted, parameter=True))
    return i + 1 + length


def _assignment(word: Word) -> tuple[str, Word] | None:
    first = word.parts[0]
    if first.quoted or first.parameter or "=" not in first.text:
        return None
    name, _, value = first.text.partition("=")
    if not name or name[0].isdigit() or not name.replace("_", "a").isalnum():
        return None
    rest = ((Part(value),) if value else ()) + word.parts[1:]
    return name, Word(rest)


def parse(line: str) -> list[AndOr]:
    """The command list of `line`."""
    tokens = tokenize(line)
    out: list[AndOr] = []
    connector, pipeline, command = ";", [], SimpleCommand()
    fd: int | None = None
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if isinstance(token, tuple):
            fd = int(token[0])
        elif isinstance(token, Word):
            if not command.words and (assignment := _assignment(token)) is not None:
                command.assignments.append(assignment)
            else:
                if not command.words and token.parts and all(p.quoted is False for p in token.parts) \
                        and token.literal in RESERVED:
                    raise ShellSyntaxError(f"syntax error: '{token.literal}' unexpected (phonesim serves "
                                           "simple commands, pipes and lists only)")
                command.words.append(token)
        elif token in REDIRECTIONS:
            target = tokens[i + 1] if i + 1 < len(tokens) else None
            if not isinstance(target, Word):
                raise ShellSyntaxError("syntax error: unexpected EOF" if target is None
                                       else f"syntax error: {_describe(target)} unexpected")
            default = 0 if token in ("<", "<&") else 1
            command.redirects.append(Redirect(default if fd is None else fd, token, target))
            fd, i = None, i + 1
        elif token == "|":
            if _empty(command):
                raise ShellSyntaxError("syntax error: '|' unexpected")
            pipeline.append(command)
            command = SimpleCommand()
        elif _empty(command):  # ; & \n && || with no command before it
            if token != "\n":  # a newline after `|`, `&&` or `||` continues the line
                raise ShellSyntaxError(f"syntax error: {_describe(token)} unexpected")
        else:
            pipeline.append(command)
            out.append(AndOr(connector, pipeline))
            connector = token if token in ("&&", "||") else ";"
            pipeline, command = [], SimpleCommand()
        i += 1
    if not _empty(command):
        pipeline.append(command)
    elif pipeline or connector != ";":
        raise ShellSyntaxError("syntax error: unexpected EOF")
    if pipeline:
        out.append(AndOr(connector, pipeline))
    return out


def _empty(command: SimpleCommand) -> bool:
    return not (command.words or command.assignments or command.redirects)


def _describe(token) -> str:
    if token is None:
        return "EOF"
    return "newline" if token == "\n" else f"'{token}'"
