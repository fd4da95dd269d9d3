"""A benchmark tool's cached environment: a failed install is one clear error and leaves nothing behind."""

from __future__ import annotations

import pytest

from verify.config import tools
from verify.errors import VerifyError


@pytest.mark.build
def test_a_release_that_does_not_exist_fails_cleanly(tmp_path, monkeypatch):
    monkeypatch.setattr(tools, "ENVS", tmp_path)
    with pytest.raises(VerifyError, match=r"guidellm==0\.0\.0 could not install it: .+") as failed:
        tools.bin_dir(("guidellm", "0.0.0"), progress=lambda _: None)
    assert "\n" not in str(failed.value)
    assert list(tmp_path.iterdir()) == [], "the half-made environment was removed"


def test_a_ready_environment_is_used_as_it_is(tmp_path, monkeypatch):
    monkeypatch.setattr(tools, "ENVS", tmp_path)
    env = tmp_path / "guidellm-9.9"
    (env / "bin").mkdir(parents=True)
    (env / "bin" / "guidellm").write_text("#!/bin/sh\n")
    (env / tools.MARKER).write_text("guidellm==9.9\n")
    assert tools.bin_dir(("guidellm", "9.9"), progress=pytest.fail) == env / "bin"
