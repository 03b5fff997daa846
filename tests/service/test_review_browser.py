"""The review pages in a real headless Chromium (Debian's `chromium`, driven by Playwright; never a
downloaded browser) against a real server on 127.0.0.1 over a real workspace with extractive runs.

Skipped, with the reason, when Playwright (extra `browser`) or Chromium is missing, unless
SKILLRAG_REQUIRE_BROWSER=1 (CI), which turns the skip into a failure. With
SKILLRAG_REVIEW_SCREENSHOTS=DIR the screenshot test also writes its PNGs to DIR (`make screenshots`
refreshes docs/).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from skillrag.cli.main import main
from skillrag.corpus import ArticleStore
from skillrag.review import ReviewStore
from skillrag.review.testing import demo_review_workspace
from skillrag.service import workspace_app
from skillrag.service.testing import serve_app
from skillrag.skill import CaseFile
from skillrag.workspace import Workspace

pytestmark = pytest.mark.browser

TOKEN = "browser-token-77c2"
CHROMIUM = os.environ.get("SKILLRAG_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
#: Flags that work in a container without a display, GPU or network.
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1366, "height": 768}  # a common laptop screen


def _missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright is not installed (pip install -e '.[browser]')"
    if not Path(CHROMIUM).is_file():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium, or set SKILLRAG_CHROMIUM)"
    return None


@pytest.fixture(scope="module")
def browser_context(tmp_path_factory):
    reason = _missing()
    if reason is not None:
        if os.environ.get("SKILLRAG_REQUIRE_BROWSER") == "1":
            pytest.fail(f"SKILLRAG_REQUIRE_BROWSER=1 but {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),  # a fresh --user-data-dir
            executable_path=CHROMIUM, headless=True, args=FLAGS, viewport=VIEWPORT)
        ctx.set_default_timeout(20_000)
        yield ctx
        ctx.close()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("review-browser") / "ws"
    demo_review_workspace(root)
    return root


@pytest.fixture
def ws(built, tmp_path) -> Workspace:
    shutil.copytree(built, tmp_path / "ws")
    return Workspace.open(tmp_path / "ws")


@pytest.fixture
def site(browser_context, ws):
    """``(base_url, page)``: the workspace served with a token, a fresh page with no cookies."""
    browser_context.clear_cookies()
    with serve_app(workspace_app(ws, token=TOKEN)) as url:
        page = browser_context.new_page()
        yield url, page
        page.close()


def sign_in(page, url: str, name: str = "Dana Reviewer") -> None:
    page.goto(url + "/review")
    assert page.url.startswith(url + "/review/-/login")
    page.fill("#reviewer", name)
    page.fill("#token", TOKEN)
    page.click("button:has-text('Sign in')")
    page.wait_for_url(url + "/review")


def _output(ws: Workspace, case_id: str) -> dict:
    return json.loads((ws.runs_dir / case_id / "output.json").read_text())


def test_open_the_list_and_a_run_with_the_keyboard_only(site):
    url, page = site
    page.goto(url + "/review")
    assert page.evaluate("document.activeElement.id") == "reviewer"  # the sign-in form has focus
    page.keyboard.type("Dana Reviewer")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "token"
    page.keyboard.type(TOKEN)
    page.keyboard.press("Enter")
    page.wait_for_url(url + "/review")
    assert page.get_by_role("heading", level=1).inner_text() == "Runs to review"
    page.keyboard.press("Tab")  # the first stop is the skip link, and it moves focus to the content
    assert page.evaluate("document.activeElement.textContent") == "Skip to main content"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
    rows = page.locator("table.runs tbody tr")
    assert rows.count() == 3
    assert page.locator("table.runs tbody th a").all_inner_texts() == ["hp-003", "hp-002", "hp-001"]
    assert "Dana Reviewer" in page.inner_text(".signout")
    # every form control has a label
    for control in page.locator("form.filters input, form.filters select").all():
        cid = control.get_attribute("id")
        assert page.locator(f"label[for='{cid}']").count() == 1
    # filter by case id, then open the run from the keyboard
    page.fill("#f-q", "002")
    page.keyboard.press("Enter")
    page.wait_for_url("**/review?q=002**")
    assert page.locator("table.runs tbody th a").all_inner_texts() == ["hp-002"]
    page.focus("table.runs tbody th a")
    page.keyboard.press("Enter")
    page.wait_for_url(url + "/review/hp-002")
    assert page.get_by_role("heading", level=1).inner_text().startswith("Case hp-002")
    assert page.locator("#contract-verdict").inner_text().startswith("Passes the evidence contract")
    assert "Wants to return a floor lamp that flickers" in page.inner_text("#case")


def test_each_snippet_is_marked_inside_its_article(site, ws):
    url, page = site
    sign_in(page, url)
    page.goto(url + "/review/hp-001")
    out = _output(ws, "hp-001")
    records = {r["index"]: r for r in out["audit"]["snippets"]}
    store = ArticleStore(ws)
    for i, snip in enumerate(out["snippets"]):
        n = i + 1
        anchor = page.locator(f"#mark-{n}")
        assert anchor.count() == 1
        article = page.locator(f"article.source:has(#mark-{n})")
        assert article.get_attribute("data-article") == snip["source_article"]
        marks = article.locator(f"pre.article-body mark[data-snippets~='{n}']")
        assert marks.count() >= 1
        rec = records[i]
        body = store.get(snip["source_article"]).body
        assert "".join(marks.all_text_contents()) == body[rec["start"]:rec["end"]]
        assert marks.first.is_visible() or marks.first.evaluate("e => e.offsetParent !== null")
    # the article text on the page is the stored body, character for character
    first = page.locator("article.source").first
    aid = first.get_attribute("data-article")
    shown = first.locator("pre.article-body").evaluate(
        "pre => Array.from(pre.childNodes).filter(n => !(n.classList && n.classList.contains('ref')))"
        ".map(n => n.textContent).join('')")
    assert shown == store.get(aid).body
    # a guidance step links to its snippet, and the snippet to its place in the article
    page.click("#version-0 li.step >> nth=0 >> a:has-text('snippet 1')")
    assert page.url.endswith("#snippet-1")
    page.click("#snippet-1 a:has-text('Show in the article')")
    assert page.url.endswith("#mark-1")
    assert page.locator("mark[data-snippets~='1']").first.is_visible()


def test_approve(site, ws):
    url, page = site
    sign_in(page, url)
    page.goto(url + "/review/hp-001")
    page.fill("#approve-comment", "Every quote checks out.")
    page.click("#approve-button")
    page.wait_for_url("**/review/hp-001?done=approve#review")
    assert "Approved" in page.inner_text("#action-done")
    assert page.locator("h1 .badge").inner_text() == "approved"
    row = page.locator("table.history tbody tr").first
    assert row.locator("td").all_inner_texts()[1:] == ["Dana Reviewer", "approve", "0", "Every quote checks out."]
    page.goto(url + "/review?state=approved")
    assert page.locator("table.runs tbody th a").all_inner_texts() == ["hp-001"]
    [act] = ReviewStore(ws).actions()
    assert (act.case_id, act.action, act.reviewer) == ("hp-001", "approve", "Dana Reviewer")


def test_reject_with_a_reason(site, ws):
    url, page = site
    sign_in(page, url)
    page.goto(url + "/review/hp-003")
    page.click("#reject-button")  # empty reason: the browser itself refuses to send the form
    assert page.url == url + "/review/hp-003"
    assert page.evaluate("document.getElementById('reject-reason').validity.valueMissing") is True
    assert ReviewStore(ws).actions() == []
    page.fill("#reject-reason", "Misses the 7-day price adjustment window.")
    page.click("#reject-button")
    page.wait_for_url("**/review/hp-003?done=reject#review")
    assert page.locator("h1 .badge").inner_text() == "rejected"
    assert "Misses the 7-day price adjustment window." in page.inner_text("table.history")
    [act] = ReviewStore(ws).actions()
    assert (act.action, act.comment) == ("reject", "Misses the 7-day price adjustment window.")


def test_edit_and_see_both_versions(site, ws):
    url, page = site
    sign_in(page, url)
    before = (ws.runs_dir / "hp-002" / "output.json").read_bytes()
    original = _output(ws, "hp-002")["guidance"]
    edited = ("1. Verify the customer and look up the order with `lookup_order`.\n"
              "2. The 30-day Standard return window has closed; offer a warranty claim instead.")
    page.goto(url + "/review/hp-002")
    assert page.input_value("#edit-guidance") == original
    page.fill("#edit-guidance", edited)
    page.fill("#edit-comment", "Tighter plan.")
    page.click("#edit-button")
    page.wait_for_url("**/review/hp-002?done=edit#review")
    assert "Saved as guidance version 1" in page.inner_text("#action-done")
    v1, v0 = page.locator("#version-1"), page.locator("#version-0")
    assert "edited by Dana Reviewer" in v1.locator("h3").inner_text() and "latest" in v1.locator("h3").inner_text()
    assert "as saved by the agent" in v0.locator("h3").inner_text()
    assert v1.locator("ul.guidance-lines li .text").all_inner_texts() == edited.split("\n")
    assert v0.locator("ul.guidance-lines li .text").all_inner_texts() == [
        ln.strip() for ln in original.split("\n") if ln.strip()]
    assert "Comment: Tighter plan." in v1.inner_text()
    page.click("details.diff summary")
    assert "+2. The 30-day Standard return window has closed" in page.inner_text("details.diff pre")
    # the snippets and the saved output are untouched; the form now edits version 1
    assert (ws.runs_dir / "hp-002" / "output.json").read_bytes() == before
    assert page.input_value("#edit-guidance") == edited
    assert page.inner_text("#approve-button") == "Approve version 1"


def test_export_the_approved_case(site, ws, tmp_path):
    url, page = site
    sign_in(page, url)
    page.goto(url + "/review/hp-001")
    edited = "1. Verify the customer with `verify_identity`.\n2. Open the claim; over $1,000 use `escalate_to_tier2`."
    page.fill("#edit-guidance", edited)
    page.click("#edit-button")
    page.wait_for_url("**done=edit**")
    page.click("#approve-button")
    page.wait_for_url("**done=approve**")
    assert page.locator("#version-1 h3 .badge.review-approved").count() == 1
    out = tmp_path / "approved.jsonl"
    assert main(["cases", "export-approved", "-w", str(ws.root), "-o", str(out)]) == 0
    cf = CaseFile(out)
    assert cf.ids() == ["hp-001"]
    gt = cf.ground_truth("hp-001")
    assert gt.reference_guidance == edited
    assert gt.required_documents == list(dict.fromkeys(s["source_article"] for s in _output(ws, "hp-001")["snippets"]))
    assert gt.expected_tools[:2] == ["verify_identity", "escalate_to_tier2"]


def test_unknown_case_and_tampered_output(site, ws):
    url, page = site
    sign_in(page, url)
    resp = page.goto(url + "/review/hp-404")
    assert resp.status == 404 and page.get_by_role("heading", level=1).inner_text() == "No such run"
    data = _output(ws, "hp-003")
    data["snippets"][0]["text"] = "A sentence that no article of the help center contains."
    (ws.runs_dir / "hp-003" / "output.json").write_text(json.dumps(data))
    resp = page.goto(url + "/review/hp-003")
    assert resp.status == 200
    assert "Fails the evidence contract" in page.inner_text("#contract-verdict")
    assert page.locator("#approve-button").count() == 0 and page.locator("#reject-button").count() == 1
    assert "stored offsets do not hold the text" in page.inner_text("#snippet-1")


def test_screenshots(site, ws, tmp_path):
    """The list and the case page on a laptop-sized screen; copied to $SKILLRAG_REVIEW_SCREENSHOTS if set."""
    url, page = site
    store = ReviewStore(ws)
    sha = {c: hashlib.sha256((ws.runs_dir / c / "output.json").read_bytes()).hexdigest()
           for c in ("hp-001", "hp-002", "hp-003")}
    store.approve("hp-002", sha["hp-002"], "Lee", version=0, comment="Policy and tools match.")
    store.reject("hp-003", sha["hp-003"], "Lee", "Misses the price adjustment window.", version=0)
    store.edit("hp-001", sha["hp-001"], "Dana Reviewer",
               _output(ws, "hp-001")["guidance"].replace("Guidance for: ", "Plan for: "), base_version=0)
    sign_in(page, url)
    shots = {"review-list.png": (url + "/review", None),
             "review-case.png": (url + "/review/hp-001", None),
             "review-evidence.png": (url + "/review/hp-001", "#article-2")}
    for name, (target, anchor) in shots.items():
        page.goto(target)
        if anchor:
            page.locator(anchor).scroll_into_view_if_needed()
            page.evaluate(f"document.querySelector('{anchor}').scrollIntoView()")
        path = tmp_path / name
        page.screenshot(path=str(path))
        png = path.read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        assert int.from_bytes(png[16:20], "big") == VIEWPORT["width"]
    dest = os.environ.get("SKILLRAG_REVIEW_SCREENSHOTS")
    if dest:
        Path(dest).mkdir(parents=True, exist_ok=True)
        for name in shots:
            shutil.copyfile(tmp_path / name, Path(dest) / name)
