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
import re
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
    for control in page.locator("form.filters input:not([type=hidden]), form.filters select").all():
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


#: In the page: every run of article text with its offset, and every mark with the snippets it names.
RUNS_JS = """art => Array.from(art.querySelectorAll('[data-s]')).map(e => ({
    s: Number(e.dataset.s), text: e.textContent, mark: e.tagName === 'MARK',
    snippets: e.tagName === 'MARK' ? e.dataset.snippets.split(' ').map(Number) : []}))"""


def test_each_snippet_is_marked_inside_its_rendered_article(site, ws):
    url, page = site
    sign_in(page, url)
    page.goto(url + "/review/hp-001")
    out = _output(ws, "hp-001")
    records = {r["index"]: r for r in out["audit"]["snippets"]}
    store = ArticleStore(ws)
    for art in page.locator("article.source").all():
        aid = art.get_attribute("data-article")
        body = store.get(aid).body
        # the article is rendered as Markdown: headings, lists and code, no Markdown markup left as text
        rendered = art.locator(".article-body.markdown")
        assert rendered.count() == 1, aid
        assert rendered.locator("h4").count() >= 1 and "**" not in rendered.inner_text()
        # every run of text stands at its offset: its text is the body there, character for character
        runs = art.evaluate(RUNS_JS)
        assert runs and all(body[r["s"]:r["s"] + len(r["text"])] == r["text"] for r in runs), aid
        # each mark lies inside the stored offsets of every snippet it names, and nothing outside is marked
        for r in runs:
            inside = [i for i, rec in records.items() if rec["start"] <= r["s"] and r["s"] + len(r["text"]) <= rec["end"]
                      and out["snippets"][i]["source_article"] == aid]
            assert sorted(r["snippets"]) == sorted(i + 1 for i in inside) or not r["text"].strip(), (aid, r)
    for i, snip in enumerate(out["snippets"]):
        n = i + 1
        assert page.locator(f"#mark-{n}").count() == 1
        article = page.locator(f"article.source:has(#mark-{n})")
        assert article.get_attribute("data-article") == snip["source_article"]
        marks = article.locator(f"mark[data-snippets~='{n}']")
        assert marks.count() >= 1
        shown = "".join(marks.all_text_contents())
        body = store.get(snip["source_article"]).body
        stored = body[records[i]["start"]:records[i]["end"]]
        assert shown and all(ch in stored for ch in set(shown))  # the visible text of the stored passage
    # a guidance step links to its snippet, and the snippet to its place in the rendered article
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
    # guidance Markdown is rendered: `lookup_order` is code, not backticks
    assert v1.locator("ul.guidance-lines li .text").all_inner_texts() == edited.replace("`", "").split("\n")
    assert v1.locator("ul.guidance-lines li .text code").all_inner_texts() == ["lookup_order"]
    assert v0.locator("ul.guidance-lines li .text").all_inner_texts() == [
        ln.strip().replace("`", "") for ln in original.split("\n") if ln.strip()]
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
    assert "$1,000" in page.inner_text("#approval-warnings")  # no snippet of version 1 states it
    page.check("#approve-confirm")
    page.click("#approve-button")
    page.wait_for_url("**done=approve**")
    assert page.locator("#version-1 h3 .badge.review-approved").count() == 1
    linked = [a.get_attribute("href")[len("#snippet-"):] for a in page.locator("#version-1 .evidence a").all()]
    out = tmp_path / "approved.jsonl"
    assert main(["cases", "export-approved", "-w", str(ws.root), "-o", str(out)]) == 0
    cf = CaseFile(out)
    assert cf.ids() == ["hp-001"]
    gt = cf.ground_truth("hp-001")
    assert gt.reference_guidance == edited
    snippets = _output(ws, "hp-001")["snippets"]
    # the articles of the snippets the approved steps link to, as the page shows the links; the tools the
    # approved guidance names, in its order
    assert gt.required_documents == list(dict.fromkeys(snippets[int(i) - 1]["source_article"] for i in linked))
    assert len(gt.required_documents) < len({s["source_article"] for s in snippets})
    assert gt.expected_tools == ["verify_identity", "escalate_to_tier2"]


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


def _reversed_steps(guidance: str) -> str:
    steps = [re.sub(r"^\s*\d+\.\s*", "", ln) for ln in guidance.split("\n") if re.match(r"^\s*\d+\.", ln)]
    return "\n".join(f"{i}. {text}" for i, text in enumerate(steps[::-1], 1))


def test_the_list_tells_runs_apart_and_sorts_and_filters(site, ws):
    url, page = site
    ReviewStore(ws).approve("hp-002", hashlib.sha256((ws.runs_dir / "hp-002" / "output.json").read_bytes())
                            .hexdigest(), "Lee", version=0)
    sign_in(page, url)
    heads = [h.strip(" ▲▼") for h in page.locator("table.runs thead th").all_inner_texts()]
    assert heads == ["Case", "Contact reason", "Guidance", "Snippets", "Warnings", "Review", "Reviewer", "Run",
                     "Date (UTC)"]
    row = page.locator("table.runs tbody tr", has=page.locator("a:text-is('hp-001')"))
    assert row.locator("td.reason").inner_text() == "Bookcase arrived with a cracked side panel"
    assert row.locator("td.summary").inner_text().startswith("Concealed damage (a box that looked fine")
    assert "15 steps" in row.locator("td.summary").inner_text()
    assert (row.locator("td.snippets").inner_text(), row.locator("td.warnings").inner_text()) == ("15", "0")
    # sort by a column heading, then back the other way
    page.click("table.runs thead a:has-text('Contact reason')")
    page.wait_for_url("**sort=reason**")
    assert page.locator("table.runs tbody th a").all_inner_texts() == ["hp-001", "hp-003", "hp-002"]
    assert page.locator("th[aria-sort='ascending']").inner_text().startswith("Contact reason")
    page.click("table.runs thead a:has-text('Contact reason')")
    page.wait_for_url("**order=desc**")
    assert page.locator("table.runs tbody th a").all_inner_texts() == ["hp-002", "hp-003", "hp-001"]
    # filter on the reviewer and on words of the contact reason; the sort is kept
    page.select_option("#f-reviewer", "Lee")
    page.click("form.filters button")
    page.wait_for_url("**reviewer=Lee**")
    assert page.locator("table.runs tbody th a").all_inner_texts() == ["hp-002"]
    assert "sort=reason" in page.url and page.locator("table.runs tbody td.reviewer").inner_text() == "Lee"
    page.goto(url + "/review")
    page.fill("#f-q", "floor lamp")
    page.keyboard.press("Enter")
    page.wait_for_url("**q=floor+lamp**")
    assert page.locator("table.runs tbody th a").all_inner_texts() == ["hp-002"]
    page.goto(url + "/review?warnings=with")
    assert page.locator("table.runs tbody tr").count() == 0 and "No run matches" in page.inner_text("main")


def test_links_follow_the_steps_after_an_edit_that_reorders_them(site, ws):
    url, page = site
    sign_in(page, url)
    out = _output(ws, "hp-001")
    page.goto(url + "/review/hp-001")
    page.fill("#edit-guidance", _reversed_steps(out["guidance"]))
    page.click("#edit-button")
    page.wait_for_url("**done=edit**")
    n = len(out["snippets"])
    for k in range(1, n + 1):  # version 1's step k is version 0's step n + 1 - k: its snippet follows it
        step = page.locator(f"#v1-step-{k}")
        assert step.locator(".evidence a").all_inner_texts() == [f"snippet {n + 1 - k}"], k
    assert page.locator("#v0-step-1 .evidence a").all_inner_texts() == ["snippet 1"]
    # the link goes to the snippet the step quotes
    page.click("#v1-step-1 .evidence a")
    assert page.url.endswith(f"#snippet-{n}")
    quoted = page.locator(f"#snippet-{n} blockquote").inner_text()
    assert quoted.split("|")[1].strip() in page.locator("#v1-step-1 .text").inner_text()


def test_add_a_snippet_by_selecting_it_and_a_passage_not_in_the_article_is_refused(site, ws):
    url, page = site
    sign_in(page, url)
    before = (ws.runs_dir / "hp-001" / "output.json").read_bytes()
    body = ArticleStore(ws).get("kb-damage-claim-steps").body
    start = body.index("Confirm the damage")
    end = body.index("their photo ids.") + len("their photo ids.")
    page.goto(url + "/review/hp-001")
    # a passage that is in no article: refused by the evidence contract, nothing recorded, input kept
    page.click("#add-evidence summary")
    page.fill("#ev-article", "kb-damage-claim-steps")
    page.fill("#ev-passage", "Every damaged item is refunded twice, no questions asked.")
    page.fill("#ev-why", "Backs step 4.")
    page.click("#evidence-button")
    assert page.locator("#action-error").inner_text().startswith("The evidence contract refused this passage")
    assert "not a verbatim substring of article 'kb-damage-claim-steps'" in page.inner_text("#evidence-reasons")
    assert page.input_value("#ev-passage") == "Every damaged item is refunded twice, no questions asked."
    assert ReviewStore(ws).actions() == []
    # select two list items in the rendered article: the form gets the article and the stored offsets
    page.goto(url + "/review/hp-001")
    page.evaluate("""([a, b]) => {
        const art = document.querySelector("article.source[data-article='kb-damage-claim-steps']");
        const runs = Array.from(art.querySelectorAll('[data-s]'));
        const at = pos => { const r = runs.find(e => +e.dataset.s <= pos && pos <= +e.dataset.s + e.textContent.length);
                            return [r.firstChild, pos - r.dataset.s]; };
        const range = document.createRange();
        range.setStart(...at(a)); range.setEnd(...at(b));
        const sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(range);
        document.dispatchEvent(new MouseEvent('mouseup', {bubbles: true}));
    }""", [start, end])
    page.wait_for_function("document.getElementById('ev-start').value !== ''")
    assert page.locator("#add-evidence").get_attribute("open") is not None
    assert (page.input_value("#ev-article"), page.input_value("#ev-start"), page.input_value("#ev-end")) == (
        "kb-damage-claim-steps", str(start), str(end))
    assert page.inner_text("#evidence-selection").startswith(
        f"Selected in kb-damage-claim-steps (characters {start}–{end}): Confirm the damage was reported")
    page.fill("#ev-why", "Backs step 3: the deadline and the photos come before the claim.")
    page.click("#evidence-button")
    page.wait_for_url("**done=evidence**")
    assert "Added as snippet 16 of guidance version 1" in page.inner_text("#action-done")
    added = page.locator("#snippet-16")
    assert "added by Dana Reviewer in version 1" in added.inner_text()
    assert added.locator("blockquote").inner_text().startswith("Confirm the damage was reported")
    marks = page.locator("article.source[data-article='kb-damage-claim-steps'] mark[data-snippets~='16']")
    assert "".join(marks.all_text_contents()) == body[start:end].replace("4. ", "", 1).replace("\n", "")
    assert page.locator("#v1-step-3 .evidence a:has-text('snippet 16')").count() == 1
    assert page.locator("#v0-step-3 .evidence a:has-text('snippet 16')").count() == 0
    assert (ws.runs_dir / "hp-001" / "output.json").read_bytes() == before  # version 0 never changes


def test_the_approval_warns_about_what_no_snippet_backs(site, ws):
    url, page = site
    sign_in(page, url)
    out = _output(ws, "hp-001")
    page.goto(url + "/review/hp-001")
    assert page.locator("#approval-warnings").count() == 0  # version 0 has none
    page.fill("#edit-guidance", out["guidance"] + "\n16. If Airplane Mode is ON, turn it off with "
              "`toggle_airplane_mode()`.")
    page.click("#edit-button")
    page.wait_for_url("**done=edit**")
    warning = page.locator("#approval-warnings")
    assert "Version 1 has 1 warning" in warning.inner_text()
    assert "names toggle_airplane_mode but no snippet contains it" in warning.inner_text()
    assert warning.locator("code").all_inner_texts() == ["toggle_airplane_mode"]
    assert "toggle_airplane_mode" in page.locator("#v1-step-16 .warn-flag").inner_text()
    page.click("#approval-warnings a:has-text('Step 16')")
    assert page.url.endswith("#v1-step-16")
    page.click("#approve-button")  # not confirmed: the browser itself refuses to send the form
    assert page.evaluate("document.getElementById('approve-confirm').validity.valueMissing") is True
    assert [a.action for a in ReviewStore(ws).actions()] == ["edit"]
    page.check("#approve-confirm")
    page.click("#approve-button")
    page.wait_for_url("**done=approve**")
    assert [a.action for a in ReviewStore(ws).actions()] == ["edit", "approve"]


def test_the_console_stays_clean(site, ws):
    """No console error, failed request or script error on any page (the favicon used to 404)."""
    url, page = site
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning")
            else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"failed: {r.url}"))
    page.on("response", lambda r: problems.append(f"{r.status}: {r.url}") if r.status >= 400 else None)
    sign_in(page, url)
    for target in ("/review", "/review/hp-001", "/review/hp-002?article=kb-returns-eligibility",
                   "/review?sort=warnings&order=asc"):
        page.goto(url + target)
        page.wait_for_load_state("networkidle")
    page.goto(url + "/review/hp-003")
    page.fill("#reject-reason", "Checking the console.")
    page.click("#reject-button")
    page.wait_for_url("**done=reject**")
    page.wait_for_load_state("networkidle")
    assert problems == []
    icon = page.evaluate("document.querySelector('link[rel=icon]').href")
    assert icon.endswith("/review/-/static/favicon.svg")


def test_screenshots(site, ws, tmp_path):
    """The list, the case page, an article with its marks and the approval warning on a laptop-sized
    screen; copied to $SKILLRAG_REVIEW_SCREENSHOTS if set."""
    url, page = site
    store = ReviewStore(ws)
    sha = {c: hashlib.sha256((ws.runs_dir / c / "output.json").read_bytes()).hexdigest()
           for c in ("hp-001", "hp-002", "hp-003")}
    store.approve("hp-002", sha["hp-002"], "Lee", version=0, comment="Policy and tools match.")
    store.reject("hp-003", sha["hp-003"], "Lee", "Misses the price adjustment window.", version=0)
    out = _output(ws, "hp-001")
    store.edit("hp-001", sha["hp-001"], "Dana Reviewer",
               out["guidance"] + "\n16. If the customer asks, turn Airplane Mode off with `toggle_airplane_mode()`.",
               base_version=0)
    sign_in(page, url)
    shots = {"review-list.png": (url + "/review", None),
             "review-case.png": (url + "/review/hp-001", None),
             "review-evidence.png": (url + "/review/hp-001", "#article-2"),
             "review-warning.png": (url + "/review/hp-001", "#v1-step-14")}
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
