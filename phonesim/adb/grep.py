"""toybox `grep` on the served device: POSIX basic (default) or extended (`-E`) regular
expressions, or fixed strings (`-F`), with `-i -v -c -q -n -o -w -x -l -h -H -s -e`.

A pattern from a client must not be able to freeze the server (MobileForge's adb server serves
many clients in one process). POSIX patterns are translated to the `regex` module's syntax and
matched with its `timeout` (the command's remaining budget), during which it releases the GIL:
a backtracking pattern costs its own connection its budget and nobody else anything. (That
timeout counts the process's CPU time: on a starved machine the stop comes later in wall time,
on a busy server sooner; either way the match costs at most the budget in CPU seconds.) Before
compiling, a pattern's expanded size (counted repeats multiplied out, as the compiler expands
them) is bounded, and each repeat count is at most 255 (`RE_DUP_MAX`), since compilation itself
is not interruptible. Errors read as bionic's `regerror` wording, after toybox's `bad regex`.
"""

from __future__ import annotations

import regex

from phonesim.adb.invocation import Call, Command, ShellResult
from phonesim.adb.limits import BudgetExceeded

RE_DUP_MAX = 255
WORD_CLASSES = "wWsSbB"


class PatternError(ValueError):
    """A pattern grep refuses; the message is regerror's."""


class _Size:
    """The expanded size of the pattern so far, per open group (see the module docstring)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.stack = [[0, 0]]  # [size of the group so far, size of its last atom]

    def atom(self, size: int = 1) -> None:
        self.stack[-1][0] += size
        self.stack[-1][1] = size
        self._check()

    def open(self) -> None:
        self.stack.append([0, 0])

    def close(self) -> None:
        if len(self.stack) == 1:
            raise PatternError("parentheses not balanced")
        size = self.stack.pop()[0]
        self.atom(max(size, 1))

    def repeat(self, factor: int) -> None:
        top = self.stack[-1]
        top[0] += top[1] * (factor - 1)
        top[1] *= factor
        self._check()

    def _check(self) -> None:
        if self.stack[-1][0] > self.limit:
            raise PatternError("regular expression too big")


def _bracket(pattern: str, i: int) -> tuple[str, int]:
    """A bracket expression starting at `[` (index i): its regex text and the index after it."""
    j, out = i + 1, ["["]
    if j < len(pattern) and pattern[j] == "^":
        out.append("^")
        j += 1
    first = True
    while j < len(pattern):
        char = pattern[j]
        if char == "]" and not first:
            out.append("]")
            return "".join(out), j + 1
        if char == "[" and pattern[j + 1:j + 2] in (":", "=", "."):
            end = pattern.find(pattern[j + 1] + "]", j + 2)
            if end < 0:
                raise PatternError("brackets ([ ]) not balanced")
            inner = pattern[j + 2:end]
            out.append(f"[:{inner}:]" if pattern[j + 1] == ":" else regex.escape(inner))
            j = end + 2
        else:
            out.append("\\" + char if char in "\\[]^" else char)
            j += 1
        first = False
    raise PatternError("brackets ([ ]) not balanced")


def _interval(body: str, size: _Size) -> str:
    low, _, high = body.partition(",")
    if not low.isdigit() or (high and not high.isdigit()):
        raise PatternError("invalid repetition count(s)")
    bounds = [int(low)] + ([int(high)] if high else [])
    if max(bounds) > RE_DUP_MAX or (len(bounds) == 2 and bounds[1] < bounds[0]):
        raise PatternError("invalid repetition count(s)")
    size.repeat(max(max(bounds), 1))
    return "{" + body + "}"


def translate(pattern: str, extended: bool, limit: int) -> str:
    """The `regex`-module equivalent of a POSIX basic/extended regular expression."""
    out: list[str] = []
    size = _Size(limit)
    i, n = 0, len(pattern)
    at_start = True  # where `*` is literal (BRE) or an error (ERE), and `^` is an anchor (BRE)
    while i < n:
        char, following = pattern[i], pattern[i + 1:i + 2]
        escaped = char == "\\"
        if escaped and not following:
            raise PatternError("trailing backslash (\\)")
        token = following if escaped else char
        special_group = (escaped != extended) and token in "()|{+?"
        if special_group and token == "(":
            if extended and following in ("?", "*", "+"):
                raise PatternError("repetition-operator operand invalid")
            out.append("(")
            size.open()
            at_start = True
        elif special_group and token == ")":
            size.close()
            out.append(")")
            at_start = False
        elif special_group and token == "|":
            out.append("|")
            at_start = True
        elif special_group and token == "{":
            end = pattern.find("\\}" if not extended else "}", i)
            if end < 0:
                raise PatternError("braces not balanced")
            if at_start:
                raise PatternError("repetition-operator operand invalid")
            out.append(_interval(pattern[i + 2 - extended:end], size))
            i = end + (2 if not extended else 1)
            continue
        elif (special_group and token in "+?") or (char == "*" and not escaped):
            if at_start:
                if extended:
                    raise PatternError("repetition-operator operand invalid")
                out.append("\\*")
                size.atom()
                at_start = False
            else:
                out.append(token)
        elif escaped and token.isdigit() and token != "0":
            out.append("\\" + token)
            size.atom()
            at_start = False
        elif escaped and token in WORD_CLASSES + "<>":
            out.append({"<": r"\b(?=\w)", ">": r"\b(?<=\w)"}.get(token, "\\" + token))
            at_start = False
        elif not escaped and char == "[":
            text, i = _bracket(pattern, i)
            out.append(text)
            size.atom()
            at_start = False
            continue
        elif not escaped and char == "^" and (extended or at_start):
            out.append("^")
        elif not escaped and char == "$" and (extended or i + 1 == n or pattern[i + 1:i + 3] in ("\\)", "\\|")):
            out.append("$")
        elif not escaped and char == ".":
            out.append(".")
            size.atom()
            at_start = False
        else:
            out.append(regex.escape(token))
            size.atom()
            at_start = False
        i += 2 if escaped else 1
    if len(size.stack) != 1:
        raise PatternError("parentheses not balanced")
    return "".join(out)


def compile_patterns(patterns: list[str], flags: set[str], limit: int):
    """One compiled regex for all of grep's patterns (any of them may match)."""
    bodies = []
    for pattern in patterns:
        body = regex.escape(pattern) if "F" in flags else translate(pattern, "E" in flags, limit)
        if "w" in flags:
            body = rf"(?<!\w)(?:{body})(?!\w)"
        bodies.append(f"(?:{body})")
    try:
        return regex.compile("|".join(bodies), regex.IGNORECASE if "i" in flags else 0)
    except regex.error as exc:
        raise PatternError(str(exc)) from None


def _arguments(args: list[str]) -> tuple[set[str], list[str], list[str], int | None]:
    flags: set[str] = set()
    patterns: list[str] = []
    operands: list[str] = []
    max_count = None
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            operands += args[i + 1:]
            break
        if arg in ("-e", "-m") and i + 1 < len(args):
            if arg == "-e":
                patterns.append(args[i + 1])
            else:
                max_count = int(args[i + 1]) if args[i + 1].isdigit() else None
            i += 2
            continue
        if arg.startswith("-") and len(arg) > 1:
            flags.update(arg[1:])
        else:
            operands.append(arg)
        i += 1
    if not patterns and operands:
        patterns = operands.pop(0).split("\n")
    return flags, patterns, operands, max_count


def _grep(call: Call) -> ShellResult:
    flags, patterns, operands, max_count = _arguments(call.args)
    if not patterns:
        return ShellResult.error("usage: grep [-EFHabhinorsvwclqxz] [-e REGEX]... [FILE]...", 2)
    budget = call.session.budget
    try:
        compiled = compile_patterns(patterns, flags, budget.limits.max_pattern_states)
    except PatternError as exc:
        return ShellResult.error(f"grep: bad regex '{patterns[0][:80]}': {exc}", 2)
    sources, errors = [], []
    for path in operands or ["-"]:
        try:
            sources.append((path, call.stdin if path == "-" else call.device.files.read(path, call.session.cwd)))
        except Exception as exc:  # FileError: a file that cannot be read
            if "s" not in flags:
                errors.append(f"grep: {exc}\n")
    prefix_names = ("H" in flags or len(operands) > 1) and "h" not in flags
    out, selected_any = [], False
    for name, data in sources:
        selected = 0
        lines = data.decode("utf-8", "surrogateescape").split("\n")
        if lines[-1] == "":  # the text after the last newline
            lines.pop()
        for number, line in enumerate(lines, 1):
            try:
                found = compiled.fullmatch(line, timeout=max(budget.remaining(), 0.001)) if "x" in flags else \
                    compiled.search(line, timeout=max(budget.remaining(), 0.001))
                parts = [m.group(0) for m in compiled.finditer(line, timeout=max(budget.remaining(), 0.001))
                         ] if "o" in flags and found and "v" not in flags else []
            except TimeoutError:
                raise BudgetExceeded(f"grep: {budget.limits.command_budget_s:g} s command budget exceeded") from None
            if (found is not None) == ("v" in flags):
                continue
            selected += 1
            lead = (f"{name}:" if prefix_names else "") + (f"{number}:" if "n" in flags else "")
            if not flags & set("cqlL"):
                out.extend(f"{lead}{p}\n" for p in (parts if "o" in flags else [line]))
                budget.check_output(sum(len(o) for o in out))
            if max_count is not None and selected >= max_count:
                break
        selected_any = selected_any or selected > 0
        if "c" in flags:
            out.append((f"{name}:" if prefix_names else "") + f"{selected}\n")
        elif "l" in flags and selected:
            out.append(f"{name if name != '-' else '(standard input)'}\n")
    if "q" in flags:
        return ShellResult(code=0 if selected_any else (2 if errors else 1))
    return ShellResult("".join(out).encode("utf-8", "surrogateescape"), "".join(errors).encode(),
                       2 if errors and not selected_any else 0 if selected_any else 1)


def _egrep(call: Call) -> ShellResult:
    return _grep(Call(call.name, ["-E", *call.args], call.device, call.session, call.stdin))


TOOLS: dict[str, Command] = {"grep": _grep, "egrep": _egrep}
