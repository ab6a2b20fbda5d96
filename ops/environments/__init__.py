"""Where episodes run: the embedded simulator and adb devices, their accessibility trees, device pool and safety guard."""
