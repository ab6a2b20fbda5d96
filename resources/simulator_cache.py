"""Results of slow, deterministic simulator computations (e.g. the app a task's shortest solution
opens first: a cold solver search of up to seconds per task) kept across runs and experiments, at
`<root>/_cache/<name>-<simulator digest>.json`. A change to phonesim's code or app data changes the
digest, so nothing computed by another simulator is read back."""

from __future__ import annotations

import json
from typing import Callable

import pyarrow.fs as pafs

from ops.data.stored_files import read_bytes, write_bytes_atomic
from resources.storage import StorageLocation

CACHE_DIR = "_cache"


class SimulatorCache:
    """A JSON mapping key -> value stored under the storage root, for this simulator."""

    def __init__(self, storage: StorageLocation, name: str):
        from phonesim.source import source_digest  # only runs on the simulator need its cache

        self.fs, root = storage.filesystem()
        self.path = f"{root}/{CACHE_DIR}/{name}-{source_digest()}.json"

    def load(self, warn: Callable[[str], None]) -> dict[str, str]:
        """The stored mapping; {} when there is none, or (with a warning: it is recomputed) when the
        file does not read as a JSON object of strings."""
        if self.fs.get_file_info(self.path).type == pafs.FileType.NotFound:
            return {}
        try:
            entries = json.loads(read_bytes(self.fs, self.path))
        except (OSError, ValueError) as error:
            warn(f"{self.path} is unreadable ({error}); its entries are computed again")
            return {}
        if not isinstance(entries, dict) or not all(isinstance(v, str) for v in entries.values()):
            warn(f"{self.path} is not a mapping of strings; its entries are computed again")
            return {}
        return entries

    def save(self, entries: dict[str, str]) -> None:
        """Replace the stored mapping atomically (a concurrent writer's entries may be lost, and are
        then computed again)."""
        self.fs.create_dir(self.path.rsplit("/", 1)[0], recursive=True)
        write_bytes_atomic(self.fs, self.path, json.dumps(entries, sort_keys=True).encode())
