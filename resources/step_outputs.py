"""What one step hands the next inside a graph-backed asset (a shard's summary to its merge step), stored
under the storage root so it crosses processes, pods and hosts as the assets' tables do (local or S3).

Dagster's own pickling IO managers do this for one filesystem each (`fs_io_manager` local,
`s3_pickle_io_manager` S3); this one writes through the storage location's filesystem, whichever it is.
Outputs are keyed by the run and step that made them, so re-executing a run from a failed step reads the
outputs of the steps it did not run again from the run that made them (Dagster passes that run's id).
Asset outputs never come here: they go through the `io_manager` (`resources.storage.ParquetIOManager`).
"""

import pickle
from typing import Any

import dagster as dg

from ops.data.stored_files import exists, read_bytes, write_bytes_atomic
from resources.experiment_names import check_segment
from resources.storage import StorageLocation

STEP_OUTPUTS = "step_outputs"  # the resource key of the IO manager below
STEP_OUTPUTS_DIR = "_step_outputs"  # under the storage root; experiment names cannot start with '_'


class StepOutputIOManager(dg.ConfigurableIOManager):
    """Small values passed between the steps of one run, pickled under `<root>/_step_outputs/<run>/<step>/`."""

    location: StorageLocation

    def _path(self, run_id: str, step_key: str, name: str) -> str:
        _, root = self.location.filesystem()
        # a step key of a mapped or nested op holds '[', ']' and '.': kept readable, made a path segment
        step = check_segment(step_key.replace("[", "=").replace("]", ""), "step key")
        return "/".join([root, STEP_OUTPUTS_DIR, check_segment(run_id, "run id"), step, f"{check_segment(name, 'output')}.pickle"])

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        fs, _ = self.location.filesystem()
        write_bytes_atomic(fs, self._path(context.run_id, context.step_key, context.name), pickle.dumps(obj))

    def load_input(self, context: dg.InputContext) -> Any:
        upstream = context.upstream_output
        if upstream is None:
            raise ValueError(f"input {context.name!r}: {STEP_OUTPUTS} only loads outputs of earlier steps")
        fs, _ = self.location.filesystem()
        path = self._path(upstream.run_id, upstream.step_key, upstream.name)
        if not exists(fs, path):
            raise FileNotFoundError(f"{self.location.uri(path)}: step {upstream.step_key} of run {upstream.run_id} "
                                    f"stored no output {upstream.name!r} here (deleted, or another storage root)")
        return pickle.loads(read_bytes(fs, path))
