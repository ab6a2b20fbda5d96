"""Put on PYTHONPATH of a pipeline run that must hold nothing of the simulator (the run on a user's
devices): with MOBILEFORGE_FORBID_SIMULATOR set to a log file, every process of the run refuses to import
any phonesim module but the action vocabulary the project shares (phonesim.actions, and the package
itself that holds it), and writes each attempt (process, module) to that file, so a test sees also
an import that some caller caught."""

import os
import sys

ALLOWED = ("phonesim", "phonesim.actions")


class ForbidSimulator:
    def __init__(self, log: str) -> None:
        self.log = log

    def find_spec(self, name, path=None, target=None):
        if (name == "phonesim" or name.startswith("phonesim.")) and name not in ALLOWED:
            with open(self.log, "a", encoding="utf-8") as log:
                log.write(f"{os.getpid()} {name} {' '.join(sys.argv)[:200]}\n")
            raise ImportError(f"{name}: this run must not import the simulator (MOBILEFORGE_FORBID_SIMULATOR)")
        return None


if os.environ.get("MOBILEFORGE_FORBID_SIMULATOR"):
    sys.meta_path.insert(0, ForbidSimulator(os.environ["MOBILEFORGE_FORBID_SIMULATOR"]))
