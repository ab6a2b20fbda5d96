"""STAND-IN for the android_world package (see ../README.md): not AndroidWorld."""
