"""The ECS variant without AWS: dagster-aws's EcsRunLauncher (configured by deploy/ecs/dagster.yaml)
against moto's ECS served on the loopback, a local agent running each task's command as a
subprocess (tests/support/ecs_agent), the instance on a real PostgreSQL server: the `policy` stage
launched as `mobileforge run` launches it and materialized end to end in an "ECS task"."""

import io
import json
import sys
from pathlib import Path

import boto3
import dagster as dg
import psycopg2
import pytest
from moto.server import ThreadedMotoServer

from pipelines.definitions import defs
from pipelines.run.launcher import code_location_runner, run_stage
from pipelines.run.observer import LineObserver
from pipelines.start_point import StagePart
from resources.experiment import register_experiment
from tests.support.ecs_agent import LocalEcsAgent
from tests.support.postgres import free_port

REPO = Path(__file__).resolve().parents[2]
CLUSTER = "mobileforge"


@pytest.fixture
def moto_ecs(monkeypatch):
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                        "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}"}.items():
        monkeypatch.setenv(name, value)
    yield boto3.client("ecs")
    server.stop()


def _task_definition(ecs) -> str:
    """deploy/ecs/task-definition.json with this test's account and region, registered in moto."""
    text = (REPO / "deploy" / "ecs" / "task-definition.json").read_text()
    definition = json.loads(text.replace("ACCOUNT", "123456789012").replace("REGION", "us-east-1"))
    return ecs.register_task_definition(**definition)["taskDefinition"]["taskDefinitionArn"]


def test_the_policy_stage_runs_in_an_ecs_task_launched_by_dagster_aws(moto_ecs, postgres, tmp_path, monkeypatch):
    ecs = moto_ecs
    ecs.create_cluster(clusterName=CLUSTER)
    database = postgres.create_database("ecs_instance").replace("postgresql://", "postgresql+psycopg2://")
    home = tmp_path / "dagster_home"
    home.mkdir()
    ec2 = boto3.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.9.0.0/16")["Vpc"]["VpcId"]
    ec2.modify_vpc_attribute(VpcId=vpc, EnableDnsHostnames={"Value": True})  # moto names a task's interface so
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.9.1.0/24")["Subnet"]["SubnetId"]
    group = ec2.create_security_group(GroupName="mobileforge", Description="runs", VpcId=vpc)["GroupId"]
    shipped = (REPO / "deploy" / "ecs" / "dagster.yaml").read_text()
    (home / "dagster.yaml").write_text(shipped.replace("subnet-REPLACE-ME", subnet).replace("sg-REPLACE-ME", group))
    for name, value in {"DAGSTER_HOME": str(home), "DAGSTER_POSTGRES_URL": database,
                        "MOBILEFORGE_ECS_TASK_DEFINITION": _task_definition(ecs),
                        "MOBILEFORGE_STORAGE_ROOT": str(tmp_path / "storage"), "PYTHONPATH": str(REPO)}.items():
        monkeypatch.setenv(name, value)
    agent_env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}  # `dagster` of this environment
    policy = defs.resolve_job_def("policy")
    with dg.DagsterInstance.get() as instance:
        assert type(instance.run_launcher).__name__ == "EcsRunLauncher"
        register_experiment(instance, "ecs")
        output = io.StringIO()
        with LocalEcsAgent(ecs, CLUSTER, agent_env, REPO) as agent:
            with code_location_runner(instance) as runner:
                run_stage(runner, StagePart.whole(policy), ["ecs"], {}, LineObserver(output))
        (task,) = agent.tasks
        assert task.command[:3] == ["dagster", "api", "execute_run"] and task.returncode == 0, task.output
        (run,) = instance.get_runs()
        assert run.status == dg.DagsterRunStatus.SUCCESS and run.tags["ecs/task_arn"] == task.arn
        assert instance.get_latest_materialization_event(dg.AssetKey("base_policy")) is not None
    (described,) = ecs.describe_tasks(cluster=CLUSTER, tasks=[task.arn])["tasks"]
    assert described["lastStatus"] == "STOPPED" and described["stoppedReason"] == "exit code 0"
    assert described["launchType"] == "FARGATE" and described["taskDefinitionArn"].endswith("mobileforge-code-location:1")
    with psycopg2.connect(postgres.url("ecs_instance")) as connection, connection.cursor() as cursor:
        cursor.execute("SELECT status FROM runs WHERE run_id = %s", (run.run_id,))
        assert cursor.fetchall() == [("SUCCESS",)]
