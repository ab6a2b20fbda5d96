"""Imported last by a run's forkserver (`FORKSERVER_PRELOAD`): freezes what the modules before it imported, as
the zygote does for run workers. Every training step process is forked from that server, and its trainer
collects garbage in full at least once (accelerate's `free_memory`): frozen, the preloaded heap (~0.6 M objects,
0.3 CPU s a full collection) is neither walked by those collections nor copied page by page into each step
process. multiprocessing offers no other hook between the preload and the first fork."""

import gc

gc.collect()
gc.freeze()
