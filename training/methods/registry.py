"""The training methods. Adding one: its folder under training/methods/ (settings, trainer, a `Method`
declaration) and one line here; the graph, the benchmark, the printed tables and the training stage's
priorities follow from this list."""

from training.methods.adagrpo.method import ADAGRPO
from training.methods.grsd.method import GRSD
from training.methods.hifpo.method import HIFPO
from training.methods.method import Method
from training.methods.rft.method import RFT
from training.methods.step_sft.method import HINT_SFT, NO_HINT_SFT

METHODS: tuple[Method, ...] = (HIFPO, RFT, GRSD, ADAGRPO, HINT_SFT, NO_HINT_SFT)


def method_named(name: str) -> Method:
    """The registered method `name`; KeyError naming the registered ones."""
    for method in METHODS:
        if method.name == name:
            return method
    raise KeyError(f"no training method {name!r}; registered: {', '.join(m.name for m in METHODS)}")


def priority_of(asset: str) -> int:
    """The Dagster priority of an asset of the training stage: the highest of the methods that read it."""
    return max((m.priority for m in METHODS if asset in m.reads), default=0)
