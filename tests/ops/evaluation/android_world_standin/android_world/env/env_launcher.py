"""STAND-IN: android_world.env.env_launcher.load_and_setup_env (same signature), no emulator."""

from . import interface

DEFAULT_ADB_PATH = "~/Android/Sdk/platform-tools/adb"
launched: list[dict] = []  # the arguments of every call, for tests


def load_and_setup_env(console_port: int = 5554, emulator_setup: bool = False, freeze_datetime: bool = True,
                       adb_path: str = DEFAULT_ADB_PATH, grpc_port: int = 8554) -> interface.AsyncEnv:
  launched.append(dict(console_port=console_port, emulator_setup=emulator_setup, adb_path=adb_path,
                       grpc_port=grpc_port))
  return interface.AsyncEnv()
