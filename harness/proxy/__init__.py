"""``harness proxy``: a real MCP client, a real MCP server, and the harness in between.

The decisions are sans I/O (:class:`ProxyCore`: fed parsed messages, it says what to send
each side); the rest moves bytes. Layout:

* :mod:`harness.proxy.core` -- :class:`ProxyCore`, the strategies and faults on real traffic;
* :mod:`harness.proxy.plan` -- the faults file (:func:`load_plan`), its checks against the
  real tools, and the seeded schedule (:class:`ProxyFaultEngine`);
* :mod:`harness.proxy.rewrite` -- what a strategy or a fault does to a real result;
* :mod:`harness.proxy.upstream` -- the server: :class:`StdioUpstream`, :class:`HTTPUpstream`;
* :mod:`harness.proxy.link` -- :class:`ProxyLink`: a core, its upstream, a lock and a timer;
* :mod:`harness.proxy.stdio`, :mod:`harness.proxy.http` -- the fronts a client talks to;
* :mod:`harness.proxy.run` -- :class:`ProxyConfig` and the fronts' main loops.

``docs/proxy.md`` describes what the proxy does; ``harness proxy --help`` how to run it.
"""

from __future__ import annotations

from harness.proxy.core import Out, ProxyCore
from harness.proxy.link import ProxyLink
from harness.proxy.plan import FaultsFileError, Plan, ProxyEvent, ProxyFaultEngine, load_plan, parse_plan
from harness.proxy.run import ProxyConfig, TraceFile, run_http, run_stdio
from harness.proxy.upstream import HTTPUpstream, StdioUpstream

__all__ = [
    "FaultsFileError",
    "HTTPUpstream",
    "Out",
    "Plan",
    "ProxyConfig",
    "ProxyCore",
    "ProxyEvent",
    "ProxyFaultEngine",
    "ProxyLink",
    "StdioUpstream",
    "TraceFile",
    "load_plan",
    "parse_plan",
    "run_http",
    "run_stdio",
]
