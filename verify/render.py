"""HTML/Markdown building blocks for showing evidence in pages.

Everything that came from a server (model output, log lines, headers) is
untrusted text: it goes through `text()` before it reaches a page, which
escapes HTML and neutralises Markdown-extension syntax (snippet includes,
directives) that would otherwise be interpreted by the build.
"""

from __future__ import annotations

import html


def text(value) -> str:
    s = html.escape(str(value), quote=True)
    # pymdownx.snippets would include a file named in a line starting with --8<--;
    # the build hook would run a {{ directive }}. Neither may be triggered by output.
    return (s.replace("--8&lt;--", "&#45;-8&lt;--").replace("{{", "&#123;&#123;").replace("}}", "&#125;&#125;")
            .replace("`", "&#96;").replace("*", "&#42;").replace("_", "&#95;"))


def pre(lines: list[str], caption: str = "", css: str = "") -> str:
    """A preformatted block as raw HTML (so Markdown never touches its content)."""
    body = "\n".join(text(line) for line in lines)
    cap = f'<div class="evidence-caption">{text(caption)}</div>' if caption else ""
    return f'\n<div class="evidence-block {css}">{cap}<pre><code>{body}</code></pre></div>\n'


def timed_transcript(lines: list[dict], caption: str = "", limit: int = 60) -> str:
    """Captured lines prefixed with their arrival time in ms."""
    shown = lines[:limit]
    rows = [f"{item['t'] * 1000:8.1f} ms  {item['line']}" if item["line"] else "" for item in shown]
    if len(lines) > limit:
        rows.append(f"... {len(lines) - limit} more lines in the evidence record")
    return pre(rows, caption, "evidence-transcript")


def table(headers: list[str], rows: list[list]) -> str:
    head = "".join(f"<th>{text(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{text(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f'\n<div class="evidence-table"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>\n'


def ms(seconds) -> str:
    return "n/a" if seconds is None else f"{seconds * 1000:.0f} ms"
