"""The local page: a starlette app on 127.0.0.1 that serves the static page and its JSON API.

Nothing is fetched from anywhere but this server: the page's HTML, CSS and JavaScript ship in
the package (``harness/view/static/``), the figures are drawn here, and the page's own
Content-Security-Policy forbids any other origin.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import traceback
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from harness.batch.grid import split_names
from harness.errors import UserError
from harness.view.api import answer
from harness.view.run import NotFound, RunView
from harness.view.sources import Source

STATIC = Path(__file__).resolve().parent / "static"
HOST = "127.0.0.1"


def _json_default(value: Any) -> Any:
    return str(value)


class _JSON(JSONResponse):
    def render(self, content: Any) -> bytes:
        import json

        return json.dumps(content, default=_json_default, allow_nan=False, separators=(",", ":")).encode()


def make_app(source: Source, *, by: str = "agent") -> Starlette:
    """The app for ``source``; ``by`` is the comparison's grouping the page opens with."""

    def index(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    def api(request: Request) -> Response:
        route = request.path_params["route"]
        query = dict(request.query_params)
        try:
            result = answer(source, route, query)
        except NotFound as exc:
            return _JSON({"error": str(exc)}, status_code=404)
        except UserError as exc:
            return _JSON({"error": str(exc)}, status_code=400)
        except Exception as exc:  # a bug: the page shows it in a line, the terminal the traceback
            traceback.print_exc()
            return _JSON({"error": f"{type(exc).__name__}: {exc} (a harness bug; see the terminal)"}, 500)
        if isinstance(result, bytes):
            return Response(result, media_type="image/png")
        if route == "info":
            result = {**result, "mode": "server", "by": by}
        return _JSON(result)

    def guarded(request: Request) -> Response:
        refused = foreign(request)
        return _JSON({"error": refused}, status_code=403) if refused else api(request)

    return Starlette(
        routes=[
            Route("/", index),
            Route("/api/{route:path}", guarded),
            Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
        ],
        # Only a page addressed to this machine by name gets an answer: another site's page that
        # rebinds its own name to 127.0.0.1 cannot read the run.
        middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=["127.0.0.1", "localhost"])],
    )


SAME_SITE = frozenset({"same-origin", "none"})
"""``Sec-Fetch-Site`` values of a request this page made, or a user typed: anything else (another
site's page, even one on this machine) gets no answer."""


def foreign(request: Request) -> str:
    """Why a request for the API comes from another site's page (empty when it does not).

    Another site cannot read the answers (no CORS header is ever sent), but it could make the
    server draw figures or read a whole table for nothing: an ``<img>`` pointing here, say. A
    browser says where a request comes from: ``Sec-Fetch-Site`` (every current browser) and
    ``Origin`` (on a cross-origin request); a request with neither (curl, a script of the user's)
    is this machine's user and is answered."""
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in SAME_SITE:
        return f"refused: a request from another site's page (Sec-Fetch-Site: {site[:40]})"
    origin = request.headers.get("origin")
    own = f"{request.url.scheme}://{request.url.netloc}"
    if origin is not None and origin != own:
        return f"refused: a request from another origin ({origin[:80]})"
    return ""


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:``port`` (0: any free port), or a one-line UserError."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        raise UserError(
            f"--port {port}: cannot listen on {HOST}:{port} ({exc.strerror or exc}); "
            "give another --port (0: any free port)"
        ) from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def warm(source: Source, by: str) -> threading.Thread:
    """Compute the comparison and the effects in the background, so the page finds them ready."""

    def work() -> None:
        if not isinstance(source, RunView) or source.sessions == 0:
            return
        # An error here is the page's to show when it asks again.
        with contextlib.suppress(UserError, ValueError, KeyError):
            source.comparison(split_names([by]))
        with contextlib.suppress(UserError, ValueError, KeyError):
            source.effects()

    thread = threading.Thread(target=work, name="harness-view-warm", daemon=True)
    thread.start()
    return thread


def serve(source: Source, sock: socket.socket, *, by: str = "agent") -> None:
    """Serve until interrupted (Ctrl-C)."""
    import uvicorn

    config = uvicorn.Config(make_app(source, by=by), log_level="warning", access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    warm(source, by)
    server.run(sockets=[sock])
