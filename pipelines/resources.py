"""Resources per profile, in one dict: `local` (embedded, offline) and `production`.

The profile comes from MOBILEFORGE_PROFILE (default `local`). Production settings are read from
environment variables so no secret or host lives in the code; the model names and endpoints are kept as
`dg.EnvVar` references (the UI shows the variable; each run's own process or pod reads its value):

- MOBILEFORGE_STORAGE_ROOT   s3://bucket/prefix (or a local path); MOBILEFORGE_S3_ENDPOINT optional
- MOBILEFORGE_POLICY_MODEL   litellm model of the served policy, e.g. openai/Qwen3-VL-8B-Instruct
- MOBILEFORGE_POLICY_API_BASE / MOBILEFORGE_POLICY_API_KEY_ENV / MOBILEFORGE_POLICY_STYLE
- MOBILEFORGE_POLICY_CHECKPOINT  the weights the served policy runs (a model directory), so the
                             trainers can adapt it; also read by the local profile (the base to adapt)
- MOBILEFORGE_SCREEN_SIZE    simulator screens, WIDTHxHEIGHT (default 1080x2400)
- MOBILEFORGE_SIM_APPS       the simulator's apps to target, name,... (default: all of them); both profiles
- MOBILEFORGE_POLICY_DEVICE  torch device of a model the project runs, e.g. cuda:0 (default cpu); both profiles
- MOBILEFORGE_POLICY_ENGINE  what serves trained checkpoints of an endpoint policy: project (default) or vllm
- MOBILEFORGE_POLICY_THREADS torch CPU threads of a model the project runs (default 1; 0: torch's
                             default, every core: for a larger model on CPU); both profiles
- MOBILEFORGE_CRITIC_MODEL   litellm model of the critic/curriculum VLM
- MOBILEFORGE_CRITIC_API_BASE / MOBILEFORGE_CRITIC_API_KEY_ENV

The corrective teacher (`remedial_trajectories.teacher: policy`), in either profile and optional:
MOBILEFORGE_TEACHER_MODEL (+ _API_BASE, _API_KEY_ENV) for a served model, else
MOBILEFORGE_TEACHER_CHECKPOINT for a local model directory; MOBILEFORGE_TEACHER_STYLE its prompt style.

The environment, in either profile, from MOBILEFORGE_ENV (read where the runs' code location
loads the definitions, so `mobileforge run` and `dagster dev` started with it both use it):

- `simulator` (default)  the embedded phonesim, in-process
- `adb`                  Android devices over adb (the served simulator too, as a device like any other:
                         nothing of the simulator is imported); the target apps from MOBILEFORGE_APPS_FILE
                         (YAML: name, package, optional description / launch_activity), else
                         MOBILEFORGE_ADB_APPS=name=package,..., else the devices' third-party packages
                         matching MOBILEFORGE_ADB_PACKAGES (comma-separated globs); the critic judges; the
                         safety guard is on
- `adb-simulator`        the simulator served as adb devices (`mobileforge sim adb-server`): its
                         apps, its judges; no guard (nothing real to harm, and its world data
                         holds labels like a to-do "Buy milk" that the deny list would stop)
- MOBILEFORGE_ADB_HOST / MOBILEFORGE_ADB_PORT (default 127.0.0.1:5037), MOBILEFORGE_ADB_SERIALS
  (comma-separated; default: every device the adb server lists)
- MOBILEFORGE_ADB_SERVERS  a device farm: further adb servers, host:port,... (one per host)
- MOBILEFORGE_LEASE_DATABASE_URL  a PostgreSQL URL: device leases hold across hosts (else a file lock
  per device on this host); MOBILEFORGE_DEVICE_WAIT_S how long a step holding no device waits for one
"""

import os
from typing import Any

import dagster as dg

from resources.catalog import DuckDBCatalog
from resources.environment import AdbDeviceResource, SimulatorResource
from resources.llm import LLMResource
from resources.policy import PolicyResource
from resources.step_outputs import STEP_OUTPUTS, StepOutputIOManager
from resources.storage import ArtifactStore, ParquetIOManager, StorageLocation

PROFILES = ("local", "production")
LEASE_DATABASE = "MOBILEFORGE_LEASE_DATABASE_URL"
ENVIRONMENTS = ("simulator", "adb", "adb-simulator")
LLM_ENDPOINT_VARIABLES = ("MOBILEFORGE_CRITIC_MODEL", "MOBILEFORGE_CRITIC_API_BASE", "MOBILEFORGE_TEACHER_MODEL")


def _required(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise ValueError(f"profile 'production' needs the environment variable {name}")
    return value


def _env(name: str) -> dg.EnvVar:
    """A required setting, referenced by name (`dg.EnvVar`): Dagster reads its value where the resource is
    built (the run's own process or pod), and the UI shows the variable, not its value. Checked here, so a
    missing one fails at load, naming it."""
    _required(name)
    return dg.EnvVar(name)


def _optional_env(name: str) -> dg.EnvVar | None:
    """An optional setting by name (`dg.EnvVar`) when it is set, else None."""
    return dg.EnvVar(name) if os.environ.get(name) else None


def _screen_size(text: str) -> tuple[int, int]:
    width, sep, height = text.lower().partition("x")
    if not sep or not width.isdigit() or not height.isdigit():
        raise ValueError(f"MOBILEFORGE_SCREEN_SIZE={text!r}: expected WIDTHxHEIGHT in pixels, e.g. 1080x2400")
    return int(width), int(height)


def _policy_threads(text: str | None) -> int | None:
    if text is None:
        return 1
    if not text.strip().isdigit():
        raise ValueError(f"MOBILEFORGE_POLICY_THREADS={text!r}: expected a thread count (0: torch's default, every core)")
    return int(text) or None


def _sim_apps() -> list[str]:
    """MOBILEFORGE_SIM_APPS as a list (unset: every app); the names are checked where the apps are listed,
    at the start of a run (SimulatorResource.apps)."""
    text = os.environ.get("MOBILEFORGE_SIM_APPS", "")
    apps = [name.strip() for name in text.split(",") if name.strip()]
    if text.strip() and not apps:
        raise ValueError(f"MOBILEFORGE_SIM_APPS={text!r}: expected app names, e.g. clock,contacts")
    return apps


def _target_apps(text: str) -> dict[str, str]:
    pairs = [item.strip().partition("=") for item in text.split(",") if item.strip()]
    if not pairs or any(not sep or not name.strip() or not package.strip() for name, sep, package in pairs):
        raise ValueError(f"MOBILEFORGE_ADB_APPS={text!r}: expected name=package,..., "
                         "e.g. contacts=com.android.contacts,clock=com.google.android.deskclock")
    return {name.strip(): package.strip() for name, _, package in pairs}


def environment_for(simulator: SimulatorResource) -> SimulatorResource | AdbDeviceResource:
    """The environment twin MOBILEFORGE_ENV selects; `simulator` is the profile's own."""
    kind = os.environ.get("MOBILEFORGE_ENV", "simulator")
    if kind not in ENVIRONMENTS:
        raise ValueError(f"MOBILEFORGE_ENV={kind!r}: expected one of {ENVIRONMENTS}")
    if kind == "simulator":
        return simulator
    port = os.environ.get("MOBILEFORGE_ADB_PORT", "5037")
    if not port.isdigit():
        raise ValueError(f"MOBILEFORGE_ADB_PORT={port!r}: expected a port number")
    wait = os.environ.get("MOBILEFORGE_DEVICE_WAIT_S", "0")
    if not wait.replace(".", "", 1).isdigit():
        raise ValueError(f"MOBILEFORGE_DEVICE_WAIT_S={wait!r}: expected seconds")
    devices = dict(adb_host=os.environ.get("MOBILEFORGE_ADB_HOST", "127.0.0.1"), adb_port=int(port),
                   serials=[s.strip() for s in os.environ.get("MOBILEFORGE_ADB_SERIALS", "").split(",") if s.strip()],
                   adb_servers=[s.strip() for s in os.environ.get("MOBILEFORGE_ADB_SERVERS", "").split(",") if s.strip()],
                   world_seed=simulator.world_seed, device_wait_s=float(wait),
                   lease_database_env=LEASE_DATABASE if os.environ.get(LEASE_DATABASE) else None)
    if kind == "adb-simulator":
        return AdbDeviceResource(**devices, simulator=True, settle_s=0.0, retry_delay_s=0.05, guard=False)
    apps_file, apps = os.environ.get("MOBILEFORGE_APPS_FILE"), os.environ.get("MOBILEFORGE_ADB_APPS")
    patterns = [p.strip() for p in os.environ.get("MOBILEFORGE_ADB_PACKAGES", "").split(",") if p.strip()]
    if not (apps_file or apps or patterns):
        raise ValueError("MOBILEFORGE_ENV=adb needs the target apps: MOBILEFORGE_APPS_FILE (a YAML apps file), "
                         "MOBILEFORGE_ADB_APPS (name=package,...) or MOBILEFORGE_ADB_PACKAGES (globs of the devices' "
                         "third-party packages)")
    return AdbDeviceResource(**devices, apps_file=apps_file, target_apps=_target_apps(apps) if apps else {},
                             package_patterns=patterns)


def names_llm_endpoints() -> bool:
    """Whether this deployment's steps call LLM endpoints through litellm: a critic or teacher model, or the critic's
    endpoint, is named (the production profile requires the critic's model). A local run that selects the LLM
    critic without naming one (its default endpoint) imports litellm in the steps that call it."""
    return any(os.environ.get(name) for name in LLM_ENDPOINT_VARIABLES)


def teacher_policy() -> PolicyResource:
    """The corrective teacher's policy from the MOBILEFORGE_TEACHER_* variables (unset: a local
    policy without a model, which `remedial_trajectories` refuses to use as teacher, naming them)."""
    style = os.environ.get("MOBILEFORGE_TEACHER_STYLE", "qwen3vl")
    if os.environ.get("MOBILEFORGE_TEACHER_MODEL"):
        return PolicyResource(kind="endpoint", model=os.environ["MOBILEFORGE_TEACHER_MODEL"], prompt_style=style,
                              api_base=os.environ.get("MOBILEFORGE_TEACHER_API_BASE"),
                              api_key_env=os.environ.get("MOBILEFORGE_TEACHER_API_KEY_ENV"))
    return PolicyResource(kind="local", prompt_style=style, checkpoint=os.environ.get("MOBILEFORGE_TEACHER_CHECKPOINT"))


def resources_for(profile: str | None = None) -> dict[str, Any]:
    """Every resource the assets need, for `profile` (default: $MOBILEFORGE_PROFILE or local)."""
    profile = profile or os.environ.get("MOBILEFORGE_PROFILE", "local")
    if profile not in PROFILES:
        raise ValueError(f"MOBILEFORGE_PROFILE={profile!r}: expected one of {PROFILES}")
    threads = _policy_threads(os.environ.get("MOBILEFORGE_POLICY_THREADS"))
    device = os.environ.get("MOBILEFORGE_POLICY_DEVICE", "cpu")
    if profile == "local":
        location = StorageLocation(root=os.environ.get("MOBILEFORGE_STORAGE_ROOT"))
        # the tiny policy answers in a few dozen tokens
        policy = PolicyResource(kind="local", max_new_tokens=48, batch_size=32,
                                checkpoint=os.environ.get("MOBILEFORGE_POLICY_CHECKPOINT"), torch_threads=threads,
                                device=device)
        # half-size screens: the embedded policy reads the element list; screenshots serve the
        # critic, fork detection and the UI, and cost 4x less to render and store
        simulator = SimulatorResource(screen_width=540, screen_height=1200, target_apps=_sim_apps())
        # The embedded critic is programmatic; this LLM is only used when a run selects the
        # LLM critic / curriculum, and then needs a reachable server.
        llm = LLMResource(model=os.environ.get("MOBILEFORGE_CRITIC_MODEL", "openai/critic"),
                          api_base=os.environ.get("MOBILEFORGE_CRITIC_API_BASE", "http://127.0.0.1:8001/v1"))
    else:
        # the storage root is read as a value: `mobileforge run` itself reads and locks what is stored there
        location = StorageLocation(root=_required("MOBILEFORGE_STORAGE_ROOT"),
                                   s3_endpoint_override=os.environ.get("MOBILEFORGE_S3_ENDPOINT"))
        width, height = _screen_size(os.environ.get("MOBILEFORGE_SCREEN_SIZE", "1080x2400"))
        simulator = SimulatorResource(screen_width=width, screen_height=height, target_apps=_sim_apps())
        policy = PolicyResource(kind="endpoint", model=_env("MOBILEFORGE_POLICY_MODEL"),
                                api_base=_optional_env("MOBILEFORGE_POLICY_API_BASE"),
                                api_key_env=_optional_env("MOBILEFORGE_POLICY_API_KEY_ENV"),
                                prompt_style=os.environ.get("MOBILEFORGE_POLICY_STYLE", "qwen3vl"),
                                checkpoint=os.environ.get("MOBILEFORGE_POLICY_CHECKPOINT"), torch_threads=threads,
                                device=device, engine=os.environ.get("MOBILEFORGE_POLICY_ENGINE", "project"))
        llm = LLMResource(model=_env("MOBILEFORGE_CRITIC_MODEL"),
                          api_base=_optional_env("MOBILEFORGE_CRITIC_API_BASE"),
                          api_key_env=_optional_env("MOBILEFORGE_CRITIC_API_KEY_ENV"))
    return {
        "io_manager": ParquetIOManager(location=location),
        STEP_OUTPUTS: StepOutputIOManager(location=location),  # between the steps of a sharded asset
        "storage": location,
        "artifact_store": ArtifactStore(location=location),
        "catalog": DuckDBCatalog(location=location),
        "simulator": environment_for(simulator),
        "policy": policy,
        "teacher": teacher_policy(),
        "llm": llm,
    }
