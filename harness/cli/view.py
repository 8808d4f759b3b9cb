"""``harness view``: a browsable page of a run (or a bench output, or a probe report)."""

from __future__ import annotations

from pathlib import Path

import click

from harness.errors import UserError

DEFAULT_PORT = 8765
DEFAULT_MAX_SESSIONS = 300


@click.command("view")
@click.argument("source", type=click.Path(path_type=Path))
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=DEFAULT_PORT,
    show_default=True,
    help="Port on 127.0.0.1 to serve on (0: any free port).",
)
@click.option("--no-open", is_flag=True, help="Do not open a browser; print the address only.")
@click.option(
    "--html",
    "html_out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the page as one self-contained file instead of serving it.",
)
@click.option(
    "--max-sessions",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_SESSIONS,
    show_default=True,
    help="With --html: sessions in the file, a stratified sample the page states (the tables "
    "and figures always cover every session).",
)
@click.option(
    "--by",
    default="agent",
    show_default=True,
    help="The comparison's grouping the page opens with, as harness compare --by.",
)
def command(
    source: Path, port: int, no_open: bool, html_out: Path | None, max_sessions: int, by: str
) -> None:
    """Browse SOURCE: a results directory (its manifest, comparison, per-scenario effects, figures,
    every session step by step, two paired sessions side by side), a harness bench output
    directory, or a harness probe --json report.

    Serves a local page on 127.0.0.1 (nothing is loaded from the network); --html writes the same
    page into one file instead, with a stated sample of the sessions.
    """
    from harness.batch.grid import split_names
    from harness.view.run import RunView
    from harness.view.sources import open_source

    view = open_source(source)
    if isinstance(view, RunView):
        known = [*view.index.column_names]
        for col in split_names([by]):
            if col not in known:
                from harness.errors import unknown_name

                raise unknown_name("--by column", col, known)
        warning = view.state.warning(str(source))
        if warning:
            click.echo(f"harness: warning: {warning}", err=True)
    if html_out is not None:
        from harness.view.export import write_html

        if html_out.parent and not html_out.parent.is_dir():
            raise UserError(f"--html {html_out}: no such directory {html_out.parent}")
        written = write_html(view, html_out, max_sessions=max_sessions, by=by)
        sample = written.get("sample")
        click.echo(f"harness view: wrote {html_out} ({written['bytes'] / 1e6:.1f} MB)", err=True)
        if sample:
            click.echo(f"harness view: {sample['text']}", err=True)
        return
    from harness.view.server import HOST, bind, serve

    sock = bind(port)
    url = f"http://{HOST}:{sock.getsockname()[1]}/"
    click.echo(f"harness view: serving {source} at {url} (Ctrl-C to stop)", err=True)
    if not no_open:
        import webbrowser

        webbrowser.open(url)
    try:
        serve(view, sock, by=by)
    finally:
        sock.close()
