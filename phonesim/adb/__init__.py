"""The simulator served as adb devices: an adb-server-protocol endpoint whose devices are
phonesim phones, so adbutils, the real `adb` client and `AdbEnvironment` run against it.

    from phonesim.adb import AdbServer
    with AdbServer(devices=2) as server:      # 127.0.0.1:server.port
        adbutils.AdbClient(port=server.port).device("phonesim-1").shell("input keyevent 3")
        server.device("phonesim-1").phone      # the phonesim state, for judges
        server.drop("phonesim-2")              # an infrastructure failure, on purpose
"""

from phonesim.adb.limits import ServerLimits
from phonesim.adb.server import ADB_SERVER_VERSION, AdbServer, DeviceNotFound

__all__ = ["ADB_SERVER_VERSION", "AdbServer", "DeviceNotFound", "ServerLimits"]
