"""Write `resources/stage_config_schema.json`, the stage assets' config schemas the CLI checks a
run's config against before it imports the graph: `python -m pipelines.config_snapshot` after
changing an asset's Config class (tests/hardening/test_config_before_work.py fails until then)."""

import json

from pipelines.definitions import defs
from pipelines.run.config_check import stage_config_schemas, stage_jobs
from resources.stage_config import SNAPSHOT


def snapshot_text() -> str:
    """The snapshot file's content for the current Config classes."""
    return json.dumps(stage_config_schemas(stage_jobs(defs)), indent=1, sort_keys=True) + "\n"


if __name__ == "__main__":
    SNAPSHOT.write_text(snapshot_text())
    print(f"wrote {SNAPSHOT}")
