"""Suite-wide test scheduling: the suite runs on two pytest-xdist workers (pyproject's addopts), and each
module's tests stay on one worker, so a module's fixtures (a whole-graph materialization above all) are
built once and shared by every test that reads them."""

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))
