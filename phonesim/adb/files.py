"""`DeviceFiles`: the served device's file system, shared by the shell (`touch`, `ls`, `>`),
`uiautomator dump`/`screencap FILE` and the `sync:` service, so what one writes the others see.

Laid out as a phone's, as far as adb clients look: `/sdcard` links to shared storage
(`/storage/emulated/0`), `/data/local/tmp` is the shell's scratch space, `/system/bin` holds the
commands the shell serves. Only those two trees are writable, as for adb's `shell` user; elsewhere
writes fail with the error a device gives (`Read-only file system`, `Permission denied`). The
whole tree lives in memory and is capped (`ServerLimits.storage_bytes`, `.max_entries`): past
them writes fail with `No space left on device`, as on a full phone.
"""

from __future__ import annotations

import errno
import stat
import threading
import time
from dataclasses import dataclass, field
from typing import Iterable

from phonesim.adb.limits import ServerLimits

ROOT, SYSTEM, SHELL, EVERYBODY = 0, 1000, 2000, 9997
USER_NAMES = {ROOT: "root", SYSTEM: "system", SHELL: "shell", EVERYBODY: "everybody"}
SHARED_STORAGE = "/storage/emulated/0"
WRITABLE_ROOTS = ("/data/local/tmp", SHARED_STORAGE)
READ_ONLY_ROOTS = ("/system", "/dev")
MAX_NAME = 255
MAX_PATH = 4096
MESSAGES = {
    errno.ENOENT: "No such file or directory", errno.EEXIST: "File exists", errno.ENOTDIR: "Not a directory",
    errno.EISDIR: "Is a directory", errno.EACCES: "Permission denied", errno.EROFS: "Read-only file system",
    errno.ENOSPC: "No space left on device", errno.ENOTEMPTY: "Directory not empty",
    errno.EINVAL: "Invalid argument", errno.ENAMETOOLONG: "File name too long", errno.ELOOP: "Too many symbolic links",
}
# errno values as Linux numbers them: what stat_v2 puts on the wire (adb's errno_to_wire)
WIRE_ERRNO = {errno.ENOENT: 2, errno.EACCES: 13, errno.EEXIST: 17, errno.ENOTDIR: 20, errno.EISDIR: 21,
              errno.EINVAL: 22, errno.ENOSPC: 28, errno.EROFS: 30, errno.ENAMETOOLONG: 36, errno.ENOTEMPTY: 39,
              errno.ELOOP: 40}


class FileError(Exception):
    """A failed file operation: an errno and the path, worded as bionic's strerror."""

    def __init__(self, code: int, path: str) -> None:
        self.code, self.path = code, path
        super().__init__(f"{path}: {MESSAGES[code]}")

    @property
    def reason(self) -> str:
        return MESSAGES[self.code]


@dataclass
class Node:
    """One file, directory or symbolic link, with the stat fields clients read."""

    mode: int
    mtime: int
    uid: int = ROOT
    gid: int = ROOT
    data: bytes = b""
    target: str = ""  # a link's target
    listable: bool = True  # False: a directory the shell user may enter but not list (/data)
    inode: int = field(default=0, compare=False)

    @property
    def is_dir(self) -> bool:
        return stat.S_ISDIR(self.mode)

    @property
    def is_link(self) -> bool:
        return stat.S_ISLNK(self.mode)

    @property
    def size(self) -> int:
        return len(self.target) if self.is_link else 4096 if self.is_dir else len(self.data)


def _split(path: str, cwd: str) -> list[str]:
    joined = path if path.startswith("/") else f"{cwd.rstrip('/')}/{path}"
    return [part for part in joined.split("/") if part not in ("", ".")]


class DeviceFiles:
    """A device's files. Thread-safe: the shell and `sync:` of one device may run at once."""

    def __init__(self, limits: ServerLimits, executables: Iterable[str] = ()) -> None:
        self.limits = limits
        self._nodes: dict[str, Node] = {}
        self._children: dict[str, set[str]] = {}
        self._used = 0
        self._next_inode = 1
        self._lock = threading.RLock()
        now = int(time.time())
        for path, mode, uid, gid, listable in (
                ("/", 0o755, ROOT, ROOT, True), ("/data", 0o771, SYSTEM, SYSTEM, False),
                ("/data/local", 0o751, ROOT, ROOT, False), ("/data/local/tmp", 0o771, SHELL, SHELL, True),
                ("/dev", 0o755, ROOT, ROOT, True), ("/storage", 0o755, ROOT, ROOT, True),
                ("/storage/emulated", 0o711, ROOT, ROOT, False), (SHARED_STORAGE, 0o2770, ROOT, EVERYBODY, True),
                ("/storage/self", 0o755, ROOT, ROOT, True), ("/system", 0o755, ROOT, ROOT, True),
                ("/system/bin", 0o751, ROOT, SHELL, True)):
            self._add(path, Node(stat.S_IFDIR | mode, now, uid, gid, listable=listable))
        self._add("/dev/null", Node(stat.S_IFCHR | 0o666, now))
        self._add("/sdcard", Node(stat.S_IFLNK | 0o777, now, target="/storage/self/primary"))
        self._add("/storage/self/primary", Node(stat.S_IFLNK | 0o777, now, target=SHARED_STORAGE))
        for name in sorted(executables):
            self._add(f"/system/bin/{name}", Node(stat.S_IFREG | 0o755, now, ROOT, SHELL))

    # --- paths -------------------------------------------------------------------------------------
    def canonical(self, path: str, cwd: str = "/", follow: bool = True) -> str:
        """The path with `.`, `..` and symbolic links resolved (the last one only when `follow`)."""
        if len(path) > MAX_PATH:
            raise FileError(errno.ENAMETOOLONG, path[:64] + "...")
        follow = follow or path.endswith("/")  # `link/` names the link's target, as in POSIX
        parts, resolved, hops = _split(path, cwd), [], 0
        while parts:
            part = parts.pop(0)
            if len(part) > MAX_NAME:
                raise FileError(errno.ENAMETOOLONG, path)
            if part == "..":
                resolved = resolved[:-1]
                continue
            candidate = "/" + "/".join([*resolved, part])
            node = self._nodes.get(candidate)
            if node is not None and node.is_link and (parts or follow):
                hops += 1
                if hops > 8:
                    raise FileError(errno.ELOOP, path)
                parts = _split(node.target, "/") + parts
                resolved = []
                continue
            resolved.append(part)
        return "/" + "/".join(resolved)

    def _writable(self, path: str, original: str) -> None:
        if any(path.startswith(root + "/") for root in WRITABLE_ROOTS):
            return
        read_only = path.count("/") == 1 or any(path == r or path.startswith(r + "/") for r in READ_ONLY_ROOTS)
        raise FileError(errno.EROFS if read_only else errno.EACCES, original)

    # --- reading -------------------------------------------------------------------------------------
    def stat(self, path: str, cwd: str = "/", follow: bool = True) -> Node | None:
        """The node at `path` (`lstat` with follow=False), or None."""
        with self._lock:
            try:
                return self._nodes.get(self.canonical(path, cwd, follow))
            except FileError:
                return None

    def require(self, path: str, cwd: str = "/", follow: bool = True) -> tuple[str, Node]:
        with self._lock:
            canonical = self.canonical(path, cwd, follow)
            node = self._nodes.get(canonical)
            if node is None:
                parent = self._nodes.get(canonical.rsplit("/", 1)[0] or "/")
                raise FileError(errno.ENOTDIR if parent is not None and not parent.is_dir else errno.ENOENT, path)
            return canonical, node

    def read(self, path: str, cwd: str = "/") -> bytes:
        _, node = self.require(path, cwd)
        if node.is_dir:
            raise FileError(errno.EISDIR, path)
        return node.data

    def list(self, path: str, cwd: str = "/") -> list[tuple[str, Node]]:
        """(name, node) of a directory's entries, sorted by name; a file lists itself."""
        with self._lock:
            canonical, node = self.require(path, cwd)
            if not node.is_dir:
                return [(path.rstrip("/").rsplit("/", 1)[-1], node)]
            if not node.listable:
                raise FileError(errno.EACCES, path)
            prefix = canonical.rstrip("/") + "/"
            return [(name, self._nodes[prefix + name]) for name in sorted(self._children[canonical])]

    def walk(self, path: str, cwd: str = "/") -> list[tuple[str, Node]]:
        """(path, node) of `path` and everything under it, parents before children."""
        with self._lock:
            canonical, _ = self.require(path, cwd)
            out, stack = [], [canonical]
            while stack:
                current = stack.pop()
                out.append((current, self._nodes[current]))
                stack.extend(sorted(f"{current.rstrip('/')}/{c}" for c in self._children.get(current, ())))
            return out

    @property
    def used_bytes(self) -> int:
        return self._used

    # --- writing -------------------------------------------------------------------------------------
    def write(self, path: str, data: bytes, cwd: str = "/", *, append: bool = False, mode: int | None = None,
              mtime: int | None = None, make_parents: bool = False, uid: int = SHELL) -> None:
        """Create or replace (or append to) a file; `make_parents` as adbd's `secure_mkdirs`."""
        with self._lock:
            canonical = self.canonical(path, cwd)
            if canonical == "/dev/null":
                return
            node = self._nodes.get(canonical)
            if node is not None and node.is_dir:
                raise FileError(errno.EISDIR, path)
            self._writable(canonical, path)
            parent = canonical.rsplit("/", 1)[0] or "/"
            if make_parents:
                self.mkdir(parent, parents=True)
            self._require_dir(parent, path)
            content = (node.data if node is not None and append else b"") + data
            grown = len(content) - (len(node.data) if node is not None else 0)
            if self._used + grown > self.limits.storage_bytes:
                raise FileError(errno.ENOSPC, path)
            if node is None:
                node = self._add(canonical, Node(stat.S_IFREG | 0o660, int(time.time()), uid, self._group(canonical)))
            node.data = content
            self._used += grown
            node.mtime = int(time.time()) if mtime is None else mtime
            if mode is not None:
                node.mode = stat.S_IFREG | (mode & 0o7777)

    def mkdir(self, path: str, cwd: str = "/", parents: bool = False) -> None:
        with self._lock:
            canonical = self.canonical(path, cwd)
            existing = self._nodes.get(canonical)
            if existing is not None:
                if parents and existing.is_dir:
                    return
                raise FileError(errno.EEXIST, path)
            parent = canonical.rsplit("/", 1)[0] or "/"
            if parents and parent not in self._nodes:
                self.mkdir(parent, parents=True)
            self._require_dir(parent, path)
            self._writable(canonical, path)
            self._add(canonical, Node(stat.S_IFDIR | 0o771, int(time.time()), SHELL, self._group(canonical)))

    def touch(self, path: str, cwd: str = "/", mtime: int | None = None) -> None:
        with self._lock:
            node = self.stat(path, cwd)
            if node is None:
                self.write(path, b"", cwd, mtime=mtime)
            else:
                self._writable(self.canonical(path, cwd), path)
                node.mtime = int(time.time()) if mtime is None else mtime

    def chmod(self, path: str, mode: int, cwd: str = "/") -> None:
        with self._lock:
            canonical, node = self.require(path, cwd)
            self._writable(canonical, path)
            node.mode = stat.S_IFMT(node.mode) | (mode & 0o7777)

    def remove(self, path: str, cwd: str = "/", recursive: bool = False, directory: bool = False) -> None:
        """`rm` (a directory only when `recursive`) or `rmdir` (`directory`: empty directories only)."""
        with self._lock:
            canonical, node = self.require(path, cwd, follow=False)
            self._writable(canonical, path)
            if node.is_dir and not (recursive or directory):
                raise FileError(errno.EISDIR, path)
            if not node.is_dir and directory:
                raise FileError(errno.ENOTDIR, path)
            if directory and self._children[canonical]:
                raise FileError(errno.ENOTEMPTY, path)
            for sub, _ in reversed(self.walk(canonical)):
                self._drop(sub)

    def rename(self, source: str, target: str, cwd: str = "/") -> None:
        with self._lock:
            old, node = self.require(source, cwd, follow=False)
            new = self.canonical(target, cwd)
            if (existing := self._nodes.get(new)) is not None and existing.is_dir:
                new = f"{new.rstrip('/')}/{old.rsplit('/', 1)[1]}"
            self._writable(old, source)
            self._writable(new, target)
            if new == old or new.startswith(old + "/"):
                raise FileError(errno.EINVAL, target)
            self._require_dir(new.rsplit("/", 1)[0] or "/", target)
            if new in self._nodes:
                self.remove(new)
            moved = self.walk(old)
            for sub, _ in reversed(moved):
                self._drop(sub)
            for sub, sub_node in moved:
                self._add(new + sub[len(old):], sub_node)
                self._used += len(sub_node.data)

    # --- bookkeeping ---------------------------------------------------------------------------------
    def _require_dir(self, directory: str, original: str) -> None:
        node = self._nodes.get(directory)
        if node is None:
            raise FileError(errno.ENOENT, original)
        if not node.is_dir:
            raise FileError(errno.ENOTDIR, original)

    @staticmethod
    def _group(path: str) -> int:
        return EVERYBODY if path.startswith(SHARED_STORAGE) else SHELL

    def _add(self, path: str, node: Node) -> Node:
        if len(self._nodes) >= self.limits.max_entries:
            raise FileError(errno.ENOSPC, path)
        node.inode, self._next_inode = self._next_inode, self._next_inode + 1
        self._nodes[path] = node
        if node.is_dir:
            self._children.setdefault(path, set())
        if path != "/":
            self._children[path.rsplit("/", 1)[0] or "/"].add(path.rsplit("/", 1)[1])
        return node

    def _drop(self, path: str) -> None:
        node = self._nodes.pop(path)
        self._used -= len(node.data)
        self._children.pop(path, None)
        self._children[path.rsplit("/", 1)[0] or "/"].discard(path.rsplit("/", 1)[1])
