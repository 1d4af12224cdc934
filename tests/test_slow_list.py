"""tests/slow_tests.txt, the tests left out of the quick run, names tests that exist, and
the quick run leaves exactly those (and the audits) out."""
import re
from pathlib import Path

from conftest import SLOW_LIST, _slow_tests

TESTS = Path(__file__).parent


def test_every_listed_test_exists():
    entries = _slow_tests()
    assert len(entries) > 10
    for entry in entries:
        name, _, function = entry.partition("::")
        path = TESTS / name
        assert path.is_file(), f"{SLOW_LIST.name}: no test file {name}"
        if function:
            assert re.search(rf"^\s*def {re.escape(function)}\(", path.read_text(), re.M), \
                f"{SLOW_LIST.name}: no test {function} in {name}"


class _Item:
    def __init__(self, path, name):
        self.path, self.name = path, name
        self.originalname = name.split("[")[0]
        self.markers = []

    def add_marker(self, marker):
        self.markers.append(marker.name)


def test_the_hook_marks_listed_functions_and_files_only(monkeypatch):
    import conftest
    monkeypatch.setattr(conftest, "_slow_tests", lambda: frozenset(
        {"test_a.py::test_slow", "sub/test_b.py"}))
    items = [_Item(TESTS / "test_a.py", "test_slow[1-x]"),
             _Item(TESTS / "test_a.py", "test_slow"),
             _Item(TESTS / "test_a.py", "test_fast"),
             _Item(TESTS / "sub" / "test_b.py", "test_any"),
             _Item(TESTS / "test_c.py", "test_slow")]
    conftest.pytest_collection_modifyitems(None, items)
    assert [item.markers for item in items] == [["slow"], ["slow"], [], ["slow"], []]
