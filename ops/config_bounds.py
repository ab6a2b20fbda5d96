"""Upper bounds shared by the stages' and the resources' config fields: a value past one is a typo
or an attack, not an experiment (a billion attempts, a hundred thousand workers, a seed past 32
bits, an infinite temperature), refused when the config is checked, naming `asset.field`."""

MAX_SEED = 2**31 - 1  # every seeded library takes it (numpy's legacy seeds stop at 2**32 - 1)
MAX_TEMPERATURE = 5.0  # far past any useful sampling temperature (OpenAI's API stops at 2)
MAX_ATTEMPTS = 100  # attempts per task (MobileForge samples K = 3..8)
MAX_WORKERS = 64  # worker processes or threads, each holding a model or a connection
MAX_PARALLEL = 4096  # tasks, episodes or requests stepped together in one batch
MAX_COUNT = 1_000_000  # caps on tasks, templates, trajectories, transitions
MAX_SECONDS = 7 * 24 * 3600.0  # a timeout or time budget: a week
MAX_TOKENS = 1 << 20  # tokens generated per answer
