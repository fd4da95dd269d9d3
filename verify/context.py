"""What a job gets to work with during a run: the live server, proxies, snippets."""

from __future__ import annotations

import contextlib
import importlib.util
import sys
from dataclasses import dataclass, field
from types import ModuleType

from verify.errors import VerifyError
from verify.paths import SNIPPETS
from verify.proxy import Proxy, managed_proxy


@dataclass
class RunContext:
    server: object  # verify.server.Server
    progress: callable = print
    _stack: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)
    _proxies: dict = field(default_factory=dict)
    proxies_used: set = field(default_factory=set)

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL of the server, ending in /v1."""
        return self.server.api

    def proxy(self, setup: str) -> Proxy:
        """An nginx of the given set-up in front of the server, started once per run."""
        if setup not in self._proxies:
            self._proxies[setup] = self._stack.enter_context(managed_proxy(setup, self.server.port))
        self.proxies_used.add(setup)
        return self._proxies[setup]

    def snippet(self, relative: str) -> ModuleType:
        """Import a Python snippet file by its path under snippets/, exactly as the page shows it."""
        path = SNIPPETS / relative
        if not path.is_file():
            raise VerifyError(f"snippet {relative} does not exist")
        name = "snippet_" + relative.replace("/", "_").removesuffix(".py")
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module

    def close(self) -> None:
        self._stack.close()
