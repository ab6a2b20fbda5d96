"""One "run" contending for devices in its own process, as a host named on the command line:
`python -m tests.deploy.lease_contender DSN ADB_PORT HOST RUN EPISODES [--hang]`.

It takes a device through the real `AdbDeviceResource` with PostgreSQL leases, runs EPISODES episodes
on it (reset and two steps each on the served simulator), recording each episode's start and end in
the table `episodes` with the server's clock, then ends its run (closing the pool releases the
lease). With --hang it takes a device, says so on stdout and waits to be killed.
"""

import sys
import time

import psycopg2

from ops.actions import Action
from ops.agent.episode import TaskSpec
from phonesim import instantiate
from resources.environment import AdbDeviceResource

TEMPLATE = "contacts.edit_phone"
# each episode lasts at least this long, so that runs taking turns on one device outlast a killed holder's lease
# (2 s): a run is still waiting when the holder's device frees, and takes it (the test checks both devices are used)
EPISODE_S = 0.4


def main(dsn: str, adb_port: int, host: str, run: str, episodes: int, hang: bool) -> None:
    resource = AdbDeviceResource(adb_port=adb_port, simulator=True, settle_s=0.0, retry_delay_s=0.05,
                                 lease_database_env="LEASE_DSN", lease_ttl_s=2.0, lease_host=host,
                                 device_wait_s=60.0)
    env = resource.make_env()
    if hang:
        print(f"holding {env.serial}", flush=True)
        time.sleep(3600)
    record = psycopg2.connect(dsn)
    record.autocommit = True
    instance = instantiate(TEMPLATE, 1)
    task = TaskSpec(task_id=instance.id, instruction=instance.instruction, step_budget=instance.step_budget,
                    app=instance.apps[0], template_id=TEMPLATE, seed=1)
    for _ in range(episodes):
        with record.cursor() as cursor:
            cursor.execute("INSERT INTO episodes (device, run, host, started_at) VALUES (%s, %s, %s, "
                           "clock_timestamp()) RETURNING id", (env.serial, run, host))
            episode = cursor.fetchone()[0]
        started = time.perf_counter()
        env.reset(task)
        for _ in range(2):
            env.step(Action(type="swipe", direction="up"))
        time.sleep(max(0.0, EPISODE_S - (time.perf_counter() - started)))
        with record.cursor() as cursor:
            cursor.execute("UPDATE episodes SET ended_at = clock_timestamp() WHERE id = %s", (episode,))
    resource.pool().close()
    print(f"done on {env.serial}", flush=True)


if __name__ == "__main__":
    dsn, port, host, run, episodes = sys.argv[1:6]
    main(dsn, int(port), host, run, int(episodes), "--hang" in sys.argv)
