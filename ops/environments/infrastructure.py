"""Failures of the infrastructure an episode runs on (a device, its connection, the pool of
devices), as opposed to the policy's: the rollout engine counts them apart and runs the attempt
again on another environment, never scoring them against the policy."""

from __future__ import annotations


class InfrastructureError(RuntimeError):
    """The environment, not the policy, failed."""


class DeviceError(InfrastructureError):
    """An adb call failed for a reason that is the device's or the connection's, not the
    policy's: record the attempt as an infrastructure failure and run it again elsewhere."""

    def __init__(self, serial: str, message: str) -> None:
        super().__init__(f"{serial}: {message}")
        self.serial = serial


class DeviceLost(DeviceError):
    """The device is gone: no longer listed by the adb server, offline, or the server is down."""


class NoDeviceFree(InfrastructureError):
    """Every device is busy with another episode, unhealthy or gone: wait for one to free up."""
