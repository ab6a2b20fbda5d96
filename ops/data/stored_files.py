"""Files stored on any pyarrow filesystem (local or S3): atomic writes under unique temporary
names, and content digests that readers check before trusting what they read.

A digest is the sha256 of a file's bytes, recorded by the writer beside the file (a manifest, a
marker, an attempt summary); about 2 ms per 4 MB, against ~130 ms to parse the same Parquet.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from typing import Callable

import pyarrow.fs as pafs

_CHUNK = 1 << 20
TEMP_PREFIX = ".tmp-"  # write_atomic's temporary files


class DamagedFileError(ValueError):
    """A stored file differs from the digest its writer recorded (flipped bytes, truncation, a
    file replaced behind the store's back) or has no digest to check."""


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_sha256(fs: pafs.FileSystem, path: str) -> str:
    """sha256 of a stored file, read in chunks."""
    digest = hashlib.sha256()
    with fs.open_input_stream(path) as stream:
        while chunk := stream.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def check_digest(location: str, actual: str, recorded: str | None, remedy: str, detail: str = "") -> None:
    """Raise DamagedFileError naming `location` and `remedy` unless `actual` is the recorded digest."""
    if recorded is None:
        raise DamagedFileError(f"{location}: no content digest was recorded when it was written, so it "
                               f"cannot be trusted; {remedy}")
    if actual != recorded:
        raise DamagedFileError(f"{location} is damaged: its sha256 is {actual[:12]}…, the writer recorded "
                               f"{recorded[:12]}…{detail}; {remedy}")


def exists(fs: pafs.FileSystem, path: str) -> bool:
    return fs.get_file_info(path).type != pafs.FileType.NotFound


def read_bytes(fs: pafs.FileSystem, path: str) -> bytes:
    with fs.open_input_stream(path) as f:
        return f.read()


def write_atomic(fs: pafs.FileSystem, path: str, write: Callable[[str], None]) -> None:
    """Write `path` so readers see the old or the new file, never a partial one.

    Local: `write` fills a temp file of a unique name in the same directory (so concurrent
    writers never share one), which is then renamed over `path`. S3: `write` writes `path`
    directly: an object appears only once its upload completes.
    """
    parent, name = path.rsplit("/", 1)
    fs.create_dir(parent, recursive=True)
    if not isinstance(fs, pafs.LocalFileSystem):
        write(path)
        return
    tmp = f"{parent}/{TEMP_PREFIX}{uuid.uuid4().hex}-{name}"
    try:
        write(tmp)
        fs.move(tmp, path)
    except BaseException:
        if exists(fs, tmp):
            fs.delete_file(tmp)
        raise


def remove_abandoned_temps(fs: pafs.FileSystem, directory: str) -> int:
    """Delete the temporary files a killed writer left in `directory`; returns how many.

    Only safe from the one writer that owns `directory` (a live writer's temp file would go too).
    """
    infos = fs.get_file_info(pafs.FileSelector(directory, allow_not_found=True))
    abandoned = [i.path for i in infos if i.type == pafs.FileType.File and i.base_name.startswith(TEMP_PREFIX)]
    for path in abandoned:
        fs.delete_file(path)
    return len(abandoned)


def write_bytes_atomic(fs: pafs.FileSystem, path: str, data: bytes) -> None:
    def write(target: str) -> None:
        with fs.open_output_stream(target) as out:
            out.write(data)

    write_atomic(fs, path, write)


def copy_file(fs: pafs.FileSystem, source: str, target: str) -> None:
    """Copy `source` to `target` on `fs`, atomically as `write_atomic` writes.

    Local: a hard link when the filesystem allows one. Only for files whose writers replace them by
    renaming a new file over them (`write_atomic`: the IO manager's tables and manifests, staged
    attempts) and never rewrite one in place, so a later write to either name leaves the other as
    it was. S3: a server-side copy.
    """
    if isinstance(fs, pafs.LocalFileSystem):
        fs.create_dir(target.rsplit("/", 1)[0], recursive=True)
        try:
            os.link(source, target)
            return
        except OSError:  # another device, or a filesystem without hard links: copy the bytes
            pass
    write_atomic(fs, target, lambda path: fs.copy_file(source, path))


def copy_tree(fs: pafs.FileSystem, source: str, target: str) -> int:
    """Copy every file under directory `source` to the same relative path under `target`
    (`copy_file`), leaving out the temporary files of unfinished writes; returns how many."""
    infos = fs.get_file_info(pafs.FileSelector(source, recursive=True, allow_not_found=True))
    files = [i.path for i in infos if i.type == pafs.FileType.File and not i.base_name.startswith(TEMP_PREFIX)]
    for path in files:
        copy_file(fs, path, f"{target}/{path[len(source) + 1:]}")
    return len(files)
