"""The `mobileforge` console command: one click group per area, each in its own module."""
