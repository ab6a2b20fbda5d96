"""The toybox tools adb clients run around device commands — `ls`, `stat`, `cat`, `touch`,
`mkdir`, `rm`, `rmdir`, `cp`, `mv`, `chmod`, `which`, `sleep`, `id`, `whoami`, `head`, `tail`,
`wc`, `uname`, `date` — on the device's files (`phonesim.adb.files`), with toybox's output and
error formats (`ls: X: No such file or directory`, `stat -c FORMAT`, `ls -l` columns)."""

from __future__ import annotations

import re
import stat
import time

from phonesim.adb.files import USER_NAMES, FileError, Node
from phonesim.adb.invocation import Call, Command, ShellResult
from phonesim.adb.limits import BudgetExceeded

DEVICE_ID = 0xFD05  # st_dev of the data partition, as `stat` prints it
ID_LINE = ("uid=2000(shell) gid=2000(shell) groups=2000(shell),1004(input),1007(log),1011(adb),1015(sdcard_rw),"
           "1028(sdcard_r),1078(ext_data_rw),1079(ext_obb_rw),3001(net_bt_admin),3002(net_bt),3003(inet),"
           "3006(net_bw_stats),3009(readproc),3011(uhid) context=u:r:shell:s0")
STAT_FORMAT = ("  File: %N\n  Size: %s\t Blocks: %b\t IO Blocks: %B\t %F\n"
               "Device: %Dh/%dd\t Inode: %i\t Links: %h\t Device type: %t,%T\n"
               "Access: (%04a/%A)\tUid: (%5u/%8U)\tGid: (%5g/%8G)\nAccess: %x\nModify: %y\nChange: %z")
_STAT_DIRECTIVE = re.compile(r"%([-#0 +]*\d{0,2}(?:\.\d{1,2})?)([a-zA-Z%])")
_DURATION = re.compile(r"(\d*)(?:\.(\d*))?([smhd]?)")
_SYMBOLIC_MODE = re.compile(r"([ugoa]*)([-+=])([rwxst]*)")


def _flags_and_operands(args: list[str]) -> tuple[set[str], list[str]]:
    flags, operands = set(), []
    for i, arg in enumerate(args):
        if arg == "--":
            return flags, operands + args[i + 1:]
        if arg.startswith("-") and len(arg) > 1:
            flags.update(arg[1:])
        else:
            operands.append(arg)
    return flags, operands


def _report(tool: str, errors: list[str], out: str = "") -> ShellResult:
    return ShellResult(out.encode("utf-8", "surrogateescape"), "".join(f"{tool}: {e}\n" for e in errors).encode(),
                       1 if errors else 0)


# --- listing ----------------------------------------------------------------------------------------

def _blocks(node: Node) -> int:
    return 0 if stat.S_ISCHR(node.mode) or node.is_link else (node.size + 4095) // 4096 * 8


def _long_lines(entries: list[tuple[str, Node]], numeric: bool) -> list[str]:
    def owner(uid: int) -> str:
        return str(uid) if numeric else USER_NAMES.get(uid, str(uid))

    rows = [(stat.filemode(n.mode), str(2 if n.is_dir else 1), owner(n.uid), owner(n.gid), str(n.size),
             time.strftime("%Y-%m-%d %H:%M", time.localtime(n.mtime)), name + (f" -> {n.target}" if n.is_link else ""))
            for name, n in entries]
    widths = [max((len(r[i]) for r in rows), default=0) for i in range(5)]
    return [f"{m}{links:>{widths[1] + 1}} {user:<{widths[2]}} {group:<{widths[3]}}{size:>{widths[4] + 1}} {date} {name}"
            for m, links, user, group, size, date, name in rows]


def _ls(call: Call) -> ShellResult:
    flags, paths = _flags_and_operands(call.args)
    long, files, cwd = bool(flags & set("lng")), call.device.files, call.session.cwd
    errors, singles, directories = [], [], []
    for path in paths or ["."]:
        node = files.stat(path, cwd, follow=not long or path.endswith("/"))
        if node is None:
            errors.append(f"{path}: No such file or directory")
        elif node.is_dir and "d" not in flags:
            directories.append(path)
        else:
            singles.append((path, node))
    if not flags & set("fU"):  # toybox sorts the operands too
        singles.sort(key=lambda item: item[0])
        directories.sort()
    sections = [_long_lines(singles, "n" in flags) if long else [p for p, _ in singles]]
    while directories:
        path = directories.pop(0)
        try:
            entries = files.list(path, cwd)
        except FileError as exc:
            errors.append(str(exc))
            continue
        if "a" in flags:
            parent = files.stat(f"{path.rstrip('/')}/..", cwd) or files.stat("/")
            entries = [(".", files.stat(path, cwd)), ("..", parent), *entries]
        elif "A" not in flags:
            entries = [(n, e) for n, e in entries if not n.startswith(".")]
        lines = _long_lines(entries, "n" in flags) if long else [n for n, _ in entries]
        if long:
            lines.insert(0, f"total {sum(_blocks(e) for _, e in entries) // 2}")
        if len(paths) > 1 or "R" in flags:
            lines.insert(0, f"{path}:")
        sections.append(lines)
        if "R" in flags:  # subdirectories next, depth first, as toybox walks them
            directories[:0] = [f"{path.rstrip('/')}/{n}" for n, e in entries if e.is_dir and n not in (".", "..")]
    text = "\n\n".join("\n".join(s) for s in sections if s)
    return _report("ls", errors, text + "\n" if text else "")


def _stat_field(directive: str, spec: str, path: str, node: Node) -> str:
    when = {"x": node.mtime, "y": node.mtime, "z": node.mtime}
    if directive in when:
        stamp = time.localtime(when[directive])
        return (f"%{spec}s" % (time.strftime("%Y-%m-%d %H:%M:%S", stamp) + ".000000000 "
                               + time.strftime("%z", stamp)))
    kind = {stat.S_IFDIR: "directory", stat.S_IFLNK: "symbolic link", stat.S_IFCHR: "character device"}.get(
        stat.S_IFMT(node.mode), "regular file" if node.size else "regular empty file")
    values = {"a": ("o", stat.S_IMODE(node.mode)), "A": ("s", stat.filemode(node.mode)), "b": ("d", _blocks(node)),
              "B": ("d", 512), "d": ("d", DEVICE_ID), "D": ("x", DEVICE_ID), "f": ("x", node.mode), "F": ("s", kind),
              "g": ("d", node.gid), "G": ("s", USER_NAMES.get(node.gid, str(node.gid))),
              "h": ("d", 2 if node.is_dir else 1),
              "i": ("d", node.inode), "n": ("s", path), "o": ("d", 4096), "s": ("d", node.size), "t": ("x", 0),
              "T": ("x", 0), "u": ("d", node.uid), "U": ("s", USER_NAMES.get(node.uid, str(node.uid))),
              "X": ("d", node.mtime), "Y": ("d", node.mtime), "Z": ("d", node.mtime),
              "N": ("s", path + (f" -> '{node.target}'" if node.is_link else ""))}
    if directive not in values:
        return "?"
    conversion, value = values[directive]
    return f"%{spec}{conversion}" % value


def _stat(call: Call) -> ShellResult:
    args, fmt, operands = list(call.args), STAT_FORMAT, []
    follow = False
    while args:
        arg = args.pop(0)
        if arg in ("-c", "--format") and args:
            fmt = args.pop(0)
        elif arg.startswith("-c") and len(arg) > 2:
            fmt = arg[2:]
        elif arg == "-L":
            follow = True
        elif arg == "-t":
            fmt = "%n %s %b %f %u %g %D %i %h %t %T %X %Y %Z %o"
        else:
            operands.append(arg)
    if not operands:
        return ShellResult.error("stat: Needs 1 argument", 1)
    out, errors = [], []
    for path in operands:
        node = call.device.files.stat(path, call.session.cwd, follow=follow)
        if node is None:
            errors.append(f"'{path}': No such file or directory")
            continue
        out.append(_STAT_DIRECTIVE.sub(lambda m: "%" if m.group(2) == "%" else _stat_field(m.group(2), m.group(1), path,
                                                                                          node), fmt) + "\n")
    return _report("stat", errors, "".join(out))


# --- reading ------------------------------------------------------------------------------------------

def _inputs(call: Call, tool: str) -> tuple[list[bytes], list[str]]:
    _, operands = _flags_and_operands([a for a in call.args if not re.fullmatch(r"-[nc]?\d+", a)])
    datas, errors = [], []
    for path in operands or ["-"]:
        if path == "-":
            datas.append(call.stdin)
            continue
        try:
            datas.append(call.device.files.read(path, call.session.cwd))
        except FileError as exc:
            errors.append(str(exc))
    return datas, errors


def _cat(call: Call) -> ShellResult:
    datas, errors = _inputs(call, "cat")
    result = _report("cat", errors)
    result.stdout = b"".join(datas)
    return result


def _count(args: list[str]) -> int:
    for i, arg in enumerate(args):
        if arg == "-n" and i + 1 < len(args) and args[i + 1].lstrip("+-").isdigit():
            return int(args[i + 1].lstrip("+-"))
        if re.fullmatch(r"-n?\d+", arg):
            return int(arg.lstrip("-n"))
    return 10


def _head_tail(call: Call) -> ShellResult:
    args = [a for i, a in enumerate(call.args) if not (i and call.args[i - 1] == "-n")]
    count = _count(call.args)
    datas, errors = _inputs(Call(call.name, args, call.device, call.session, call.stdin), call.name)
    out = b""
    for data in datas:
        lines = data.splitlines(keepends=True)
        out += b"".join(lines[:count] if call.name == "head" else lines[len(lines) - count:] if count else [])
    result = _report(call.name, errors)
    result.stdout = out
    return result


def _wc(call: Call) -> ShellResult:
    flags, _ = _flags_and_operands(call.args)
    datas, errors = _inputs(call, "wc")
    data = b"".join(datas)
    counts = {"l": data.count(b"\n"), "w": len(data.split()), "c": len(data)}
    chosen = [counts[f] for f in "lwc" if f in flags] or list(counts.values())
    return _report("wc", errors, " ".join(str(c) for c in chosen) + "\n")


# --- changing files -------------------------------------------------------------------------------------

def _each(call: Call, tool: str, action, quote: bool = False, ignore_missing: bool = False) -> ShellResult:
    _, operands = _flags_and_operands(call.args)
    if not operands:
        return ShellResult.error(f"{tool}: Needs 1 argument", 1)
    errors = []
    for path in operands:
        try:
            action(path)
        except FileError as exc:
            if not (ignore_missing and exc.reason == "No such file or directory"):
                errors.append(f"'{path}': {exc.reason}" if quote else f"{path}: {exc.reason}")
    return _report(tool, errors)


def _touch(call: Call) -> ShellResult:
    files, cwd = call.device.files, call.session.cwd
    no_create = "c" in _flags_and_operands(call.args)[0]
    return _each(call, "touch", lambda p: None if no_create and files.stat(p, cwd) is None else files.touch(p, cwd),
                 quote=True)


def _mkdir(call: Call) -> ShellResult:
    flags, _ = _flags_and_operands(call.args)
    files, cwd = call.device.files, call.session.cwd
    return _each(call, "mkdir", lambda p: files.mkdir(p, cwd, parents="p" in flags), quote=True)


def _rm(call: Call) -> ShellResult:
    flags, _ = _flags_and_operands(call.args)
    recursive = bool(flags & set("rR"))
    return _each(call, "rm", lambda p: call.device.files.remove(p, call.session.cwd, recursive=recursive),
                 ignore_missing="f" in flags)


def _rmdir(call: Call) -> ShellResult:
    return _each(call, "rmdir", lambda p: call.device.files.remove(p, call.session.cwd, directory=True))


def _mode(spec: str, current: int) -> int:
    if re.fullmatch(r"[0-7]{1,4}", spec):
        return int(spec, 8)
    mode = current
    for clause in spec.split(","):
        match = _SYMBOLIC_MODE.fullmatch(clause)
        if match is None:
            raise ValueError(spec)
        who, op, perms = match.group(1) or "a", match.group(2), match.group(3)
        mask = sum({"r": 0o444, "w": 0o222, "x": 0o111}.get(p, 0) for p in perms)
        mask &= sum({"u": 0o700, "g": 0o070, "o": 0o007, "a": 0o777}[w] for w in who)
        mode = mode | mask if op == "+" else mode & ~mask if op == "-" else (mode & ~sum(
            {"u": 0o700, "g": 0o070, "o": 0o007, "a": 0o777}[w] for w in who)) | mask
    return mode


def _chmod(call: Call) -> ShellResult:
    args = [a for a in call.args if a not in ("-R", "-f", "-v")]
    if len(args) < 2:
        return ShellResult.error("chmod: Needs 2 arguments", 1)
    spec, files, cwd = args[0], call.device.files, call.session.cwd
    try:
        _mode(spec, 0)
    except ValueError:
        return ShellResult.error(f"chmod: bad mode '{spec}'", 1)
    return _each(Call("chmod", args[1:], call.device, call.session),
                 "chmod", lambda p: files.chmod(p, _mode(spec, stat.S_IMODE(files.require(p, cwd)[1].mode)), cwd))


def _copy_or_move(call: Call) -> ShellResult:
    flags, operands = _flags_and_operands(call.args)
    if len(operands) < 2:
        return ShellResult.error(f"{call.name}: Needs 2 arguments", 1)
    files, cwd, target = call.device.files, call.session.cwd, operands[-1]
    into = files.stat(target, cwd)
    if len(operands) > 2 and (into is None or not into.is_dir):
        return ShellResult.error(f"{call.name}: '{target}' not directory", 1)
    errors = []
    for source in operands[:-1]:
        inside = into is not None and into.is_dir
        destination = f"{target.rstrip('/')}/{source.rstrip('/').rsplit('/', 1)[-1]}" if inside else target
        try:
            if call.name == "mv":
                files.rename(source, destination, cwd)
                continue
            root, node = files.require(source, cwd)
            if node.is_dir and not flags & set("rRa"):
                errors.append(f"Skipped dir '{source}'")
                continue
            for path, sub in files.walk(root):
                copy = files.canonical(destination, cwd) + path[len(root):]
                if sub.is_dir:
                    files.mkdir(copy, parents=True)
                else:
                    files.write(copy, sub.data, mtime=sub.mtime if flags & set("pa") else None)
        except FileError as exc:
            errors.append(f"'{source}': {exc.reason}" if exc.path == source else str(exc))
    return _report(call.name, errors)


def which(call: Call) -> ShellResult:
    """The path of each named command in $PATH; status 1 when one is missing."""
    _, names = _flags_and_operands(call.args)
    found = [f"/system/bin/{n}\n" for n in names
             if "/" not in n and (node := call.device.files.stat(f"/system/bin/{n}")) and node.mode & 0o111]
    return ShellResult("".join(found).encode(), code=0 if len(found) == len(names) and names else 1)


# --- time, identity ---------------------------------------------------------------------------------------

def _sleep(call: Call) -> ShellResult:
    if not call.args:
        return ShellResult.error("sleep: Needs 1 argument", 1)
    total = 0.0
    for arg in call.args:
        match = _DURATION.fullmatch(arg)
        if match is None or not (arg[:1].isdigit() or arg[:1] == "."):
            return ShellResult.error(f"sleep: Not a number '{arg}'", 1)
        seconds = float(f"{match.group(1) or 0}.{match.group(2) or 0}")
        total += seconds * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[match.group(3)]
    budget = call.session.budget
    if call.device.gone.wait(min(total, max(budget.remaining(), 0.0))):
        return ShellResult(code=130)  # the device went away under the command
    if total > budget.limits.command_budget_s or budget.remaining() <= 0:
        raise BudgetExceeded(f"sleep: {budget.limits.command_budget_s:g} s command budget exceeded")
    return ShellResult()


def _id(call: Call) -> ShellResult:
    flags, _ = _flags_and_operands(call.args)
    if "u" in flags or "g" in flags:
        return ShellResult(b"shell\n" if "n" in flags else b"2000\n")
    return ShellResult(f"{ID_LINE}\n".encode())


def _uname(call: Call) -> ShellResult:
    fields = {"s": "Linux", "n": "localhost", "r": "6.1.23-android14", "v": "#1 SMP PREEMPT", "m": "x86_64"}
    flags, _ = _flags_and_operands(call.args)
    chosen = list(fields) if "a" in flags else [f for f in fields if f in flags] or ["s"]
    return ShellResult((" ".join(fields[f] for f in chosen) + "\n").encode())


def _date(call: Call) -> ShellResult:
    formats = [a[1:] for a in call.args if a.startswith("+")]
    text = time.strftime(formats[0][:256] if formats else "%a %b %e %H:%M:%S %Z %Y")
    return ShellResult(f"{text}\n".encode())


TOOLS: dict[str, Command] = {
    "ls": _ls, "stat": _stat, "cat": _cat, "head": _head_tail, "tail": _head_tail, "wc": _wc, "touch": _touch,
    "mkdir": _mkdir, "rm": _rm, "rmdir": _rmdir, "chmod": _chmod, "cp": _copy_or_move, "mv": _copy_or_move,
    "which": which, "sleep": _sleep, "id": _id, "whoami": lambda call: ShellResult(b"shell\n"), "uname": _uname,
    "date": _date,
}
