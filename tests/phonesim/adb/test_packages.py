"""Package manager answers for the served apps in the formats clients parse: `pm list packages
[-3|-s] [-f] [FILTER]`, `pm path`, `dumpsys package` (adbutils' `app_info` reads versionName,
versionCode, firstInstallTime, the APK path from them)."""

import datetime
import re

from phonesim.adb.packages import app_version
from phonesim.apps import load_apps
from tests.support.adb_server import adb, needs_adb_binary

SERVED = sorted(app.package for app in load_apps().values())


def _apk(package: str) -> str:
    """The regex of a user app's APK path: /data/app/~~<22 base64>==/<package>-<22 base64>==/base.apk."""
    return rf"/data/app/~~[\w-]{{22}}==/{re.escape(package)}-[\w-]{{22}}==/base.apk"


def test_list_packages_separates_the_served_apps_from_the_system(client):
    device = client.device("phonesim-1")
    third_party = device.list_packages(["-3"])
    assert third_party == sorted(SERVED + ["com.android.adbkeyboard"])
    system = device.list_packages(["-s"])
    assert "android" in system and "com.android.systemui" in system and not set(system) & set(third_party)
    assert device.list_packages() == sorted(third_party + system)
    assert device.list_packages(["com.android.c"]) == ["com.android.contacts"]  # pm's substring filter


def test_list_packages_f_and_pm_path_name_the_apks(client):
    device = client.device("phonesim-1")
    lines = device.shell("pm list packages -3 -f").splitlines()
    assert len(lines) == len(SERVED) + 1
    contacts = next(line for line in lines if line.endswith("=com.android.contacts"))
    assert re.fullmatch("package:" + _apk("com.android.contacts") + "=com.android.contacts",
                        contacts)
    path = device.shell2("pm path com.android.contacts", v2=True)
    assert path.returncode == 0 and path.stdout == contacts.rsplit("=", 1)[0] + "\n"
    missing = device.shell2("pm path com.example.absent", v2=True)
    assert (missing.returncode, missing.stdout) == (1, "")


def test_app_info_parses_versions_and_install_time(client):
    before = datetime.datetime.now().replace(microsecond=0) - datetime.timedelta(minutes=5)
    info = client.device("phonesim-2").app_info("com.android.contacts")
    assert info.version_name == app_version("contacts") and info.version_code == 1
    assert before <= info.first_install_time <= datetime.datetime.now() and info.last_update_time
    assert re.fullmatch(_apk("com.android.contacts"), info.path)
    assert "HAS_CODE" in info.flags
    assert client.device("phonesim-2").app_info("com.example.absent") is None


def test_dumpsys_package_lists_activities_and_install_fields(client):
    device = client.device("phonesim-1")
    text = device.shell("dumpsys package com.google.android.deskclock")
    assert "com.google.android.deskclock/." in text.split("\nPackages:")[0]
    for field in ("versionCode=1 minSdk=30 targetSdk=34", f"versionName={app_version('clock')}", "codePath=/data/app/",
                  "firstInstallTime=", "lastUpdateTime=", "pkgFlags=[ HAS_CODE", "signatures=PackageSignatures{"):
        assert field in text, field
    assert device.shell("dumpsys package com.example.absent") == "Unable to find package: com.example.absent"


def test_installing_and_removing_apps_is_refused_as_the_package_manager_does(client):
    device = client.device("phonesim-1")
    assert device.shell("pm install /data/local/tmp/app.apk").startswith("Failure [INSTALL_FAILED_USER_RESTRICTED")
    assert device.shell("pm uninstall com.android.contacts") == "Failure [DELETE_FAILED_USER_RESTRICTED]"
    assert "com.android.contacts" in device.list_packages()


@needs_adb_binary
def test_the_adb_binary_reads_package_paths(server):
    result = adb(server.port, "-s", "phonesim-1", "shell", "pm", "path", "net.gsantner.markor")
    assert result.returncode == 0
    assert re.fullmatch("package:" + _apk("net.gsantner.markor") + "\n", result.stdout)
    assert adb(server.port, "-s", "phonesim-1", "shell", "cmd package list packages -3").stdout.count("package:") == \
        len(SERVED) + 1
