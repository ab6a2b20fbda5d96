"""Suite-wide settings. Under `--dist loadscope` each test module runs on one worker, so a module's
whole-graph run is built once; xdist starts the modules with the most tests first."""

import os

# One torch thread per process, as the pipeline's policy and trainers run (PolicyResource.torch_threads): two
# xdist workers on two cores, each torch op on two threads, spin-wait for each other (a decoding step's
# attention 7.6 ms with two threads beside a busy process, 0.02 ms with one). Subprocesses inherit it.
os.environ.setdefault("OMP_NUM_THREADS", "1")
