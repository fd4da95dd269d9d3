"""The site, built strictly from committed evidence (no server, no network), and read in a real Chromium.

The browser tests serve the built site on 127.0.0.1 and drive Debian's
Chromium headless through Playwright. Screenshots of the main pages are saved
in screenshots/ (uploaded as CI artifacts).
"""

from __future__ import annotations

import functools
import shutil
import http.server
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from verify.verdicts.releases import releases_checked

from tests.conftest import ROOT
from verify.registry import all_claims, all_jobs

# Every test here reads a whole site built from the committed evidence (tests/tiers.py).
pytestmark = pytest.mark.build

CHROMIUM = "/usr/bin/chromium"
SCREENSHOTS = ROOT / "screenshots"
# Anchors that runbooks may already link to: `verify pages` appends to the list; nothing removes from it.
PUBLISHED_ANCHORS = ROOT / "tests" / "published_anchors.txt"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "VERIFY_SERVER_URL": "http://127.0.0.1:9"}
    # The proxy variables point nowhere: a build that tried the network would fail.
    env.update({"HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9"})
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)], cwd=ROOT,
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return out


def test_streaming_page_shows_every_claim_with_its_anchor(site):
    html = (site / "streaming" / "index.html").read_text()
    for claim_id, (job, claim) in all_claims().items():
        if "streaming.md" in job.pages and claim_id in (ROOT / "docs" / "streaming.md").read_text():
            assert f'id="{claim.anchor}"' in html, claim_id
    assert "data: [DONE]" in html
    # The chart is drawn into the page (inline SVG: it takes the theme's colours), with words for it.
    figure = html.split('id="figure-stream-timing"', 1)[1].split("</figure>", 1)[0]
    assert '<svg xmlns="http://www.w3.org/2000/svg"' in figure and "<title>" in figure and "<desc>" in figure
    assert "verify-summary" in html and "claims checked against a live vLLM engine" in html


def test_every_chart_is_inline_svg_with_a_title_and_a_description(site):
    """Charts are drawn by verify/site/charts.py into the page; no page points at a drawn file."""
    found = 0
    for page in site.rglob("*.html"):
        text = page.read_text()
        assert not re.search(r"<img[^>]+evidence/[^>]+\.svg", text), page
        for figure in text.split('<figure class="verify-figure"')[1:]:
            body = figure.split("</figure>", 1)[0]
            assert 'class="verify-chart' in body and "<title>" in body and "<desc>" in body, page
            found += 1
    assert found >= 10


def test_the_deployed_tree_resolves_every_record_link_and_claim_anchor(site):
    """What the push workflow deploys to GitHub Pages is this folder (site/): every link to a record
    lands on a file in it, and every link to a claim lands on an element with that id."""
    from urllib.parse import unquote, urljoin, urlparse
    ids: dict[Path, set[str]] = {}

    def ids_of(page: Path) -> set[str]:
        if page not in ids:
            ids[page] = set(re.findall(r'id="([^"]+)"', page.read_text()))
        return ids[page]

    records = anchors = 0
    base = "http://site.invalid/"
    for page in site.rglob("*.html"):
        here = base + page.relative_to(site).as_posix()
        for href in re.findall(r'href="([^"]+)"', page.read_text()):
            url = urlparse(urljoin(here, href))
            if url.netloc != "site.invalid":
                continue
            target = site / unquote(url.path.lstrip("/"))
            if target.is_dir():
                target = target / "index.html"
            if url.path.startswith("/evidence/") and url.path.endswith(".json"):
                assert target.is_file(), f"{page}: {href}"
                records += 1
            if url.fragment.startswith("claim-"):
                assert target.is_file() and url.fragment in ids_of(target), f"{page}: {href}"
                anchors += 1
    assert records >= 100 and anchors >= 100, (records, anchors)


def test_evidence_records_are_published_at_stable_urls(site):
    for job_id in all_jobs():
        assert (site / "evidence" / job_id / "cpu.json").is_file(), job_id


def test_status_page_lists_every_claim(site):
    html = (site / "status" / "index.html").read_text()
    for claim_id in all_claims():
        assert f"<code>{claim_id}</code>" in html


def test_model_output_with_markup_is_escaped_in_the_page(site):
    html = (site / "streaming" / "index.html").read_text()
    assert '<img src=x onerror="alert(1)">' not in html
    assert "&lt;img src=x onerror=" in html


def test_notebook_page_shows_recorded_outputs_and_their_provenance(site):
    html = (site / "getting-started" / "index.html").read_text()
    assert "Outputs recorded by the verify stage" in html and "server version:" in html
    assert "TTFT" in html


def test_no_page_refers_to_an_outside_host_for_assets(site):
    for page in site.rglob("*.html"):
        text = page.read_text()
        for m in re.finditer(r'<(?:link|script|img)[^>]+(?:href|src)="(https?://[^"]+)"', text):
            pytest.fail(f"{page.relative_to(site)} loads {m.group(1)}")


def _published() -> list[str]:
    # A comment starts with "# "; "#claim-..." alone is an anchor on the home page.
    return [line for line in PUBLISHED_ANCHORS.read_text().splitlines()
            if line.strip() and not line.startswith("# ")]


def _ids_on(site: Path, page: str, cache: dict) -> set[str]:
    if page not in cache:
        f = site / page / "index.html" if page else site / "index.html"
        cache[page] = set(re.findall(r'id="([^"]+)"', f.read_text())) if f.is_file() else set()
    return cache[page]


def gone(site: Path, entries: list[str], anchors: dict, pages: dict) -> list[str]:
    """The published anchors that lead nowhere once every redirect is followed."""
    from verify.config.redirects import resolve
    cache: dict = {}
    out = []
    for entry in entries:
        page, _, anchor = resolve(entry, anchors, pages).partition("#")
        if anchor not in _ids_on(site, page, cache):
            out.append(entry)
    return out


def test_previously_published_anchors_still_exist(site):
    """Every anchor runbooks may link to still leads somewhere: on its page, or where a redirect sends it."""
    from verify.config import redirects
    assert gone(site, _published(), redirects.ANCHORS, redirects.pages()) == []


def test_a_moved_anchor_needs_its_redirect(site):
    """The site's real move (streaming#experiment-5 became streaming#proxy-read-timeout): without its entry
    in the anchor map it is gone; a page moved without its page redirect is gone too."""
    from verify.config import redirects
    assert "streaming#experiment-5" in _published()
    assert gone(site, ["streaming#experiment-5"], {}, redirects.pages()) == ["streaming#experiment-5"]
    assert gone(site, ["streaming#experiment-5"], redirects.ANCHORS, redirects.pages()) == []
    # A symptom's page under its old name: only the page redirect leads on.
    old = "troubleshooting#symptom-health-503"
    assert gone(site, [old], redirects.ANCHORS, {}) == [old]
    assert gone(site, [old], redirects.ANCHORS, redirects.pages()) == []
    # What the build serves at the old page address forwards, anchor and all (mkdocs-redirects).
    assert "symptoms/" in (site / "troubleshooting" / "index.html").read_text()


def test_every_symptom_and_claim_anchor_is_published(site):
    """New anchors join the list when they are published: every symptom and every claim box on a page."""
    from verify.config.symptoms import SYMPTOMS
    from verify.verdicts.directives import page_claims
    from verify.site.render import page_url
    published = set(_published())
    missing = [f"symptoms#{s.anchor}" for s in SYMPTOMS if f"symptoms#{s.anchor}" not in published]
    for pc in page_claims():
        _, claim = all_claims()[pc.claim_id]
        entry = f"{page_url(pc.page).rstrip('/')}#{claim.anchor}"
        if entry not in published:
            missing.append(entry)
    assert not missing, "run `verify pages`: it appends these to tests/published_anchors.txt: " + \
        ", ".join(sorted(set(missing))[:10])


# --- in a real browser -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def served(site):
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture(scope="module")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.fail("Debian's chromium is not installed (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--disable-quic"])
        yield b
        b.close()


def open_page(browser, origin):
    """A fresh browser context and page that records console errors and requests leaving 127.0.0.1."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=origin)
    pg = context.new_page()
    pg.errors, pg.outside = [], []
    pg.on("console", lambda m: pg.errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    pg.on("request", lambda r: pg.outside.append(r.url) if not r.url.startswith(("http://127.0.0.1", "data:", "blob:")) else None)
    return context, pg


@pytest.fixture
def page(browser, served):
    context, pg = open_page(browser, served)
    yield pg
    context.close()


def _visit(page, served, path, shot=None):
    page.goto(served + path, wait_until="networkidle")
    if shot:
        SCREENSHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / shot), full_page=False)
    assert page.errors == [], page.errors
    assert page.outside == [], page.outside


@pytest.mark.browser
def test_streaming_article_renders_evidence(page, served):
    _visit(page, served, "/streaming/", "streaming.png")
    assert page.locator(".verify-claim").count() >= 30
    assert page.locator(".evidence-transcript").first.is_visible()
    assert page.locator(".evidence-table table").count() >= 10
    chart = page.locator("#figure-stream-timing svg.verify-chart")
    assert chart.is_visible() and chart.bounding_box()["width"] >= 640
    assert page.locator(".verify-pill.verify-confirmed").count() >= 20


# Every page with charts, and the smallest phone width the site is read at.
CHART_PAGES = ["/lifecycle/", "/prefill-decode/", "/kv-cache/", "/cost/", "/streaming/", "/offline/"]
PHONE = {"width": 412, "height": 915}

_CONTRAST = """els => {
  const rgb = c => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const lum = c => { const v = rgb(c).map(x => { x /= 255; return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; });
                     return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; };
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  let bg = 'rgb(255, 255, 255)';
  for (let n = els[0]; n; n = n.parentElement) {
    const c = getComputedStyle(n).backgroundColor;
    if (c && c !== 'rgba(0, 0, 0, 0)' && c !== 'transparent') { bg = c; break; }
  }
  return els.map(svg => {
    const texts = [...svg.querySelectorAll('text')];
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    const series = [...svg.querySelectorAll('.series, .bar, .marker')];
    return {width: svg.getBoundingClientRect().width,
            smallestText: Math.min(...texts.map(t => parseFloat(t.getAttribute('font-size') || 13) * scale)),
            textContrast: Math.min(...texts.map(t => ratio(getComputedStyle(t).fill, bg))),
            seriesContrast: Math.min(...series.map(e => ratio(
                getComputedStyle(e).stroke !== 'none' ? getComputedStyle(e).stroke : getComputedStyle(e).fill, bg)))};
  });
}"""


@pytest.mark.browser
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_charts_stay_readable_on_a_phone_in_light_and_dark(browser, served, scheme):
    """At 412 pixels a chart keeps its drawing width, 640 (the box scrolls), so its text stays at 11 px or more,
    and its text and lines stand out from the page's background in either colour scheme."""
    context = browser.new_context(viewport=PHONE, color_scheme=scheme, device_scale_factor=1)
    try:
        pg = context.new_page()
        seen = 0
        for path in CHART_PAGES:
            pg.goto(served + path, wait_until="networkidle")
            charts = pg.locator("svg.verify-chart")
            if not charts.count():
                continue
            charts.first.scroll_into_view_if_needed()
            SCREENSHOTS.mkdir(exist_ok=True)
            pg.screenshot(path=str(SCREENSHOTS / f"chart-{path.strip('/')}-{scheme}-412.png"))
            for m in charts.evaluate_all(_CONTRAST):
                seen += 1
                assert m["width"] >= 640, (path, m)
                assert m["smallestText"] >= 11, (path, m)
                assert m["textContrast"] >= 4.5, (path, scheme, m)
                assert m["seriesContrast"] >= 2.0, (path, scheme, m)
        assert seen >= 10
    finally:
        context.close()


@pytest.mark.browser
def test_model_markup_renders_as_text(page, served):
    _visit(page, served, "/streaming/")
    block = page.locator(".untrusted-output pre")
    assert '<img src=x onerror="alert(1)">' in block.inner_text()
    assert block.locator("img, b").count() == 0


@pytest.mark.browser
def test_status_page_lists_every_job(page, served):
    _visit(page, served, "/status/", "status.png")
    text = page.locator("table.verify-status").inner_text()
    for claim_id in all_claims():
        assert claim_id in text


@pytest.mark.browser
def test_deep_link_to_a_claim_lands_on_it(page, served):
    anchor = all_claims()["cancel-direct.httpx"][1].anchor
    _visit(page, served, f"/streaming/#{anchor}")
    box = page.locator(f"#{anchor}")
    assert box.is_visible()
    assert box.evaluate("el => { const r = el.getBoundingClientRect(); return r.top >= 0 && r.top < window.innerHeight; }")


@pytest.mark.browser
def test_copy_button_copies_the_snippet(page, served):
    _visit(page, served, "/streaming/")
    block = page.locator("#experiment-1 ~ .highlight").first  # the curl command of Experiment 1
    block.hover()
    block.locator('button[data-md-type="copy"], button.md-clipboard').first.click()
    copied = page.evaluate("navigator.clipboard.readText()")
    shown = (ROOT / "snippets" / "streaming" / "curl_chat_stream.sh").read_text()
    assert copied.strip() == shown.strip()


def _search(page, served, text):
    """Type into the site's search box; returns the result items."""
    _visit(page, served, "/")
    page.locator(".md-search__input").first.click(force=True)
    page.keyboard.type(text)
    page.wait_for_selector(".md-search-result__item", timeout=10_000)
    # Results appear while the words are typed: wait until the list answers the whole query.
    page.wait_for_function("q => document.querySelector('.md-search__input').value === q && "
                           "!document.querySelector('.md-search-result__meta')?.textContent.includes('Typing')",
                           arg=text, timeout=10_000)
    page.wait_for_timeout(500)
    return page.locator(".md-search-result__item")


@pytest.mark.browser
def test_search_finds_the_article(page, served):
    _search(page, served, "proxy_buffering")
    assert "Streaming" in page.locator(".md-search-result").inner_text()


@pytest.mark.browser
def test_search_finds_a_claim_by_its_identifier(page, served):
    results = _search(page, served, "offline-generation-defaults.explicit-replaces-all")
    assert any("Offline Batch Inference" in r.inner_text() for r in results.all()[:3])


@pytest.mark.browser
@pytest.mark.parametrize("words, symptom", [
    ("maximum context length", "maximum-context-length"),
    ("The engine is currently busy", "engine-busy-503"),
    ("does not exist", "model-does-not-exist"),
    ("tokens arrive in bursts", "tokens-in-bursts"),
    ("pod is Ready requests hang", "ready-but-hangs"),
])
def test_search_finds_a_symptom_by_what_an_operator_types(page, served, words, symptom):
    """The words of an error message, or of what one sees, find the symptom on the index."""
    results = _search(page, served, words)
    page.wait_for_timeout(300)  # results fill in as the index answers
    hrefs = [a.get_attribute("href") or "" for a in page.locator(".md-search-result__item a").all()]
    # Material adds ?h=<words> (what to highlight) between the page and the anchor.
    assert any(re.search(rf"/symptoms/(\?h=[^#]*)?#symptom-{symptom}$", h) for h in hrefs[:8]), (words, hrefs[:8])


@pytest.mark.browser
@pytest.mark.parametrize("old, new", [
    ("/streaming/#experiment-5", "/streaming/#proxy-read-timeout"),  # an anchor that moved
    ("/troubleshooting/#symptom-health-503", "/symptoms/#symptom-health-503"),  # a page that moved
])
def test_an_old_address_lands_on_the_new_place(page, served, old, new):
    page.goto(served + old)
    page.wait_for_url(served + new, timeout=10_000)
    target = page.locator("#" + new.split("#")[1])
    target.wait_for(state="visible")
    assert page.errors == [] and page.outside == []


@pytest.mark.browser
def test_a_claim_box_shows_its_permanent_link(page, served):
    anchor = all_claims()["health-probes.dead-health-503"][1].anchor
    _visit(page, served, "/health/")
    link = page.locator(f"#{anchor} .verify-permalink a")
    assert link.inner_text() == f"health/#{anchor}"
    assert link.get_attribute("href") == f"#{anchor}"


@pytest.mark.browser
def test_notebook_page_renders(page, served):
    _visit(page, served, "/getting-started/", "notebook.png")
    assert "server version:" in page.content()


def _build_edited(tmp_path, page: str, edit, *flags) -> subprocess.CompletedProcess:
    """`mkdocs build` with the given flags, on a copy of docs/ where one page was edited."""
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs)
    (docs / page).write_text(edit((docs / page).read_text()))
    config = (ROOT / "mkdocs.yml").read_text()
    config = config.replace("docs_dir: docs", f"docs_dir: {docs}").replace(
        "  - verify/site/hook.py", f"  - {ROOT / 'verify' / 'site' / 'hook.py'}").replace(
        "base_path: [snippets]", f"base_path: [{ROOT / 'snippets'}]")
    (tmp_path / "mkdocs.yml").write_text(config)
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", *flags, "-f", str(tmp_path / "mkdocs.yml"),
                           "-d", str(tmp_path / "site")], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"}, cwd=tmp_path)


@pytest.mark.parametrize("breakage", [
    ("[gone](no-such-page.md)", "no-such-page.md"),
    ("[gone](streaming.md#no-such-anchor)", "no-such-anchor"),
    ('```python\n--8<-- "streaming/no_such_snippet.py"\n```', "no_such_snippet.py"),
], ids=["link", "anchor", "snippet"])
def test_strict_build_fails_on_a_broken_link_anchor_or_snippet(tmp_path, breakage):
    text, named = breakage
    r = _build_edited(tmp_path, "lifecycle.md", lambda md: md + "\n\n" + text + "\n", "--strict")
    assert r.returncode != 0
    assert named in r.stderr + r.stdout


@pytest.mark.parametrize("flags", [["-q"], [], ["--strict", "-q"]], ids=["quiet", "plain", "strict-quiet"])
def test_a_page_that_contradicts_its_evidence_fails_every_build(tmp_path, flags):
    """A flipped expectation on a real page: no flag lets the build publish it."""
    flip = 'claim("kv-sizing.size-from-memory", expect="confirmed")'

    def contradict(md):
        assert flip in md
        return md.replace(flip, flip.replace("confirmed", "refuted"))
    r = _build_edited(tmp_path, "kv-cache.md", contradict, *flags)
    assert r.returncode != 0
    assert "contradict their evidence" in r.stderr and "kv-sizing.size-from-memory" in r.stderr
    assert not (tmp_path / "site" / "kv-cache" / "index.html").exists()
    assert "Traceback" not in r.stderr


def test_a_broken_record_fails_the_build_in_one_line(tmp_path, monkeypatch):
    """A cut-short record raises one line naming the file; the hook turns it into a build error, not a traceback."""
    from mkdocs.exceptions import PluginError

    from verify.errors import VerifyError
    from verify.evidence import store
    from verify.site import hook
    whole = (ROOT / "docs" / "evidence" / "kv-sizing" / "cpu.json").read_text()
    for broken in (whole[:300], '{"job": "kv-sizing"}', "[]"):
        (tmp_path / "kv-sizing").mkdir(exist_ok=True)
        (tmp_path / "kv-sizing" / "cpu.json").write_text(broken)
        with pytest.raises(VerifyError) as e:
            store.load("kv-sizing", "cpu", tmp_path)
        assert "kv-sizing/cpu.json" in e.value.message and "\n" not in e.value.message

    def read_broken(*_):
        store.load("kv-sizing", "cpu", tmp_path)
    monkeypatch.setattr(hook, "render_page", read_broken)
    page = type("Page", (), {"file": type("File", (), {"src_path": "kv-cache.md"})()})()
    with pytest.raises(PluginError, match="kv-sizing/cpu.json"):
        hook.on_page_markdown("", page, {}, None)


def test_status_page_links_land_on_their_claims(site):
    html = (site / "status" / "index.html").read_text()
    links = re.findall(r'href="\.\./([^"#]*)#(claim-[^"]+)"', html)
    assert len(links) >= len(all_claims())
    for page, anchor in links:
        target = site / page / "index.html"
        assert f'id="{anchor}"' in target.read_text(), f"{page}#{anchor}"


@pytest.mark.browser
def test_summary_tells_a_refuted_myth_from_a_contradiction(page, served):
    """Lifecycle states two claims as refuted: they agree with the evidence and read as such."""
    _visit(page, served, "/lifecycle/", "lifecycle.png")
    summary = page.locator("#verification-summary")
    assert "refuted, as the page says" in summary.inner_text()
    assert summary.locator(".verify-pill.verify-contradicted").count() == 0
    myth = page.locator("#claim-request-endings--abort-counted")
    assert myth.locator(".verify-pill.verify-myth").count() >= 1
    assert "as this page says" in myth.inner_text()


def test_status_page_tells_refuted_myths_from_contradictions(site):
    html = (site / "status" / "index.html").read_text()
    row = html[html.index('id="status-request-endings--abort-counted"'):]
    row = row[:row.index("</tr>")]
    assert "verify-myth" in row and "refuted, as the pages say" in row


@pytest.mark.browser
def test_claims_say_which_releases_they_hold_on_and_the_releases_page_links_both_records(page, served):
    _visit(page, served, "/streaming/")
    lines = page.locator(".verify-releases > summary")
    assert lines.count() >= 1
    assert re.match(r"vLLM releases: \w+ (on every release checked|since|on) ",
                    lines.first.inner_text())
    _visit(page, served, "/releases/", "releases.png")
    assert "Compared: vLLM" in page.locator("#releases-compared").inner_text()
    for link in page.locator("table.verify-changes a[href$='.json'], table.verify-moved a[href$='.json'], "
                             "table.verify-timeline a[href$='.json']").all()[:8]:
        assert page.request.get(link.evaluate("a => a.href")).ok
    timeline = page.locator("table.verify-timeline")
    assert timeline.locator("thead th").count() == 1 + len(releases_checked()), "one column per release"


@pytest.mark.browser
@pytest.mark.parametrize("path", ["/prefill-decode/", "/openai-server/", "/sampling/"])
def test_a_claim_box_with_every_release_is_as_tall_as_a_box_with_one(page, served, path):
    """The line across releases shares the agreement note's row, and every release's verdict is folded
    under it: taking the line out must not make the box shorter (1280 px wide)."""
    _visit(page, served, path)
    boxes = page.locator(".verify-claim:has(.verify-releases):has(.verify-agree)")
    assert boxes.count() >= 3
    for i in range(min(boxes.count(), 8)):
        box = boxes.nth(i)
        with_releases = box.evaluate("b => b.getBoundingClientRect().height")
        one_release = box.evaluate("b => { const c = b.cloneNode(true); c.querySelector('.verify-releases').remove();"
                                   " b.after(c); const h = c.getBoundingClientRect().height; c.remove(); return h; }")
        assert with_releases <= one_release + 1, (box.get_attribute("id"), with_releases, one_release)
    first = boxes.first
    first.locator(".verify-releases > summary").click()
    assert first.locator(".verify-per-release li").count() == len(releases_checked()), "one click shows every release"
