"""The Harbor & Pine demo corpus (skillrag/demo_data): articles parse and ingest, cases are
well-formed, and every case is supported by the articles it cites (ids, tools, verbatim evidence)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from skillrag import demo_data
from skillrag.corpus import ArticleStore, ingest
from skillrag.corpus.loaders import markdown
from skillrag.corpus.model import ID_PATTERN
from skillrag.corpus.sections import parse_sections
from skillrag.workspace import Workspace

TAGS = {"policies", "procedures", "tools", "escalation", "faq"}
TIERS = ("Standard", "Plus", "Elite")
CASE_FIELDS = {
    "case_id",
    "contact_reason",
    "contact_reason_path",
    "case_notes",
    "case_messages",
    "ground_truth",
}
GT_FIELDS = {"reference_guidance", "required_documents", "expected_tools"}
TOOL_HEADING = re.compile(r"^## `([a-z][a-z0-9_]*)`\s*$", re.MULTILINE)
BACKTICKED = re.compile(r"`([a-z][a-z0-9]*(?:_[a-z0-9]+)+)`")
STEP = re.compile(r"^(\d+)\. \S")


def _read_jsonl(path: Path) -> list[dict]:
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:  # pragma: no cover - reported as a failure
                pytest.fail(f"{path.name}:{n}: not JSON ({exc})")
    return rows


@pytest.fixture(scope="module")
def articles() -> dict:
    """id -> SourceArticle, parsed by the project's own Markdown loader."""
    root = demo_data.HELP_CENTER
    out = {}
    for path in sorted(root.glob("*.md")):
        (art,) = markdown.load(path, root, "demo")
        assert art.id not in out, f"duplicate id {art.id} ({path.name})"
        out[art.id] = art
    return out


@pytest.fixture(scope="module")
def meta() -> dict:
    """id -> raw front matter, read with python-frontmatter."""
    import frontmatter

    return {
        (post := frontmatter.load(p)).metadata.get("id"): post.metadata
        for p in sorted(demo_data.HELP_CENTER.glob("*.md"))
    }


@pytest.fixture(scope="module")
def cases() -> list[dict]:
    return _read_jsonl(demo_data.CASES)


@pytest.fixture(scope="module")
def tools_defined(articles) -> set[str]:
    """Tool names with a reference heading (## `name`) in a `tools` article."""
    names: set[str] = set()
    for art in articles.values():
        if art.source_tag == "tools":
            names.update(TOOL_HEADING.findall(art.body))
    return names


# --- articles ---------------------------------------------------------------------------------


def test_at_least_28_articles_with_plain_unique_ids_and_front_matter(articles, meta):
    files = sorted(demo_data.HELP_CENTER.glob("*.md"))
    assert len(files) >= 28
    assert len(articles) == len(files) == len(meta)
    for aid, m in meta.items():
        assert {"id", "title", "tag"} <= set(m), f"{aid}: front matter lacks id/title/tag"
        assert ID_PATTERN.match(aid) and ".." not in aid and "/" not in aid, aid
        assert m["tag"] in TAGS, f"{aid}: tag {m['tag']!r}"
    for aid, art in articles.items():
        assert art.source_path == f"{aid}.md", "file name and front-matter id disagree"
        assert art.source_tag == meta[aid]["tag"]


def test_every_tag_is_used(meta):
    assert {m["tag"] for m in meta.values()} == TAGS


def test_articles_have_title_heading_sections_and_realistic_length(articles):
    for aid, art in articles.items():
        first = art.body.lstrip("\n").splitlines()[0]
        assert first == f"# {art.title}", f"{aid}: first line {first!r} is not '# <title>'"
        level2 = [s for s in parse_sections(art.body) if s.level == 2]
        assert len(level2) >= 2, f"{aid}: needs ## sections"
        words = len(art.body.split())
        assert 150 <= words <= 600, f"{aid}: {words} words"


def test_mix_of_prose_steps_and_tables(articles):
    with_steps = [a for a in articles.values() if re.search(r"^1\. ", a.body, re.MULTILINE)]
    with_tables = [a for a in articles.values() if re.search(r"^\|.*\|\s*$", a.body, re.MULTILINE)]
    assert len(with_steps) >= 10
    assert len(with_tables) >= 15


def test_tier_tables_in_at_least_four_articles(articles):
    def tiered_table(body: str) -> bool:
        rows = [ln for ln in body.splitlines() if ln.startswith("|")]
        return all(any(re.search(rf"\b{t}\b", r) for r in rows) for t in TIERS)

    tiered = sorted(aid for aid, art in articles.items() if tiered_table(art.body))
    assert len(tiered) >= 4, tiered
    # the core policies the cases rely on each carry their own tier table
    for aid in (
        "kb-returns-eligibility",
        "kb-refund-timing",
        "kb-damage-compensation",
        "kb-price-adjustment-eligibility",
        "kb-assembly-service",
    ):
        assert aid in tiered, aid


def test_tool_names_are_one_consistent_set(articles, tools_defined):
    assert len(tools_defined) >= 12
    used: set[str] = set()
    for art in articles.values():
        if art.source_tag != "tools":
            used.update(n for n in BACKTICKED.findall(art.body) if n in tools_defined)
    # every documented tool is used by some policy/procedure/escalation/faq article
    assert tools_defined <= used, sorted(tools_defined - used)
    # procedures only call tools that the tool reference documents
    for art in articles.values():
        if art.source_tag == "procedures":
            called = set(re.findall(r"(?:with|Call|call|using) `([a-z]+(?:_[a-z0-9]+)+)`", art.body))
            assert called <= tools_defined, (art.id, sorted(called - tools_defined))


def test_cross_references_point_to_existing_articles(articles):
    for art in articles.values():
        for ref in re.findall(r"`(kb-[a-z0-9-]+)`", art.body):
            assert ref in articles, f"{art.id} cites missing {ref}"


def test_conflicting_archived_note_disagrees_on_plus_return_window(articles):
    def plus_window(aid: str) -> int:
        m = re.search(r"^\| Plus \| (\d+) days from delivery", articles[aid].body, re.MULTILINE)
        assert m, aid
        return int(m.group(1))

    assert plus_window("kb-returns-eligibility") == 60
    assert plus_window("kb-holiday-returns-2025") == 45  # deliberate, dated conflict
    assert "2025" in articles["kb-holiday-returns-2025"].title


def test_near_duplicate_articles_exist_and_differ(articles):
    gift, credit = articles["kb-gift-card-balance"], articles["kb-store-credit-balance"]
    assert gift.source_tag == credit.source_tag
    assert "`check_gift_card_balance`" in gift.body and "`check_gift_card_balance`" not in credit.body
    assert "`lookup_store_credit`" in credit.body and "`lookup_store_credit`" not in gift.body


def test_help_center_ingests_byte_identical(tmp_path, articles):
    ws = Workspace.init(tmp_path / "ws")
    rep = ingest(ws, [demo_data.HELP_CENTER])
    assert rep.counts()["added"] == len(articles) and rep.counts()["rejected"] == 0
    store = ArticleStore(ws)
    for aid, src in articles.items():
        got = store.get(aid)
        assert got.body == src.body and got.title == src.title
    assert ingest(ws, [demo_data.HELP_CENTER]).counts()["unchanged"] == len(articles)


# --- cases ------------------------------------------------------------------------------------


def test_at_least_10_cases_with_all_fields(cases):
    assert len(cases) >= 10
    ids = [c.get("case_id") for c in cases]
    assert len(set(ids)) == len(ids)
    for c in cases:
        assert CASE_FIELDS <= set(c), f"{c.get('case_id')}: missing {CASE_FIELDS - set(c)}"
        assert ID_PATTERN.match(c["case_id"])
        assert isinstance(c["contact_reason"], str) and c["contact_reason"].strip()
        assert isinstance(c["contact_reason_path"], list) and c["contact_reason_path"]
        assert all(isinstance(n, str) and n.strip() for n in c["case_notes"]) and c["case_notes"]
        assert 3 <= len(c["case_messages"]) <= 8, c["case_id"]
        for m in c["case_messages"]:
            assert (
                set(m) == {"role", "content"} and m["role"] in {"customer", "agent"} and m["content"].strip()
            )
        assert {m["role"] for m in c["case_messages"]} == {"customer", "agent"}
        gt = c["ground_truth"]
        assert GT_FIELDS <= set(gt), f"{c['case_id']}: ground_truth lacks {GT_FIELDS - set(gt)}"


def test_reference_guidance_is_3_to_7_numbered_steps_naming_tools(cases):
    for c in cases:
        gt = c["ground_truth"]
        lines = gt["reference_guidance"].splitlines()
        assert 3 <= len(lines) <= 7, c["case_id"]
        assert [int(STEP.match(ln).group(1)) for ln in lines] == list(range(1, len(lines) + 1)), c["case_id"]
        for tool in gt["expected_tools"]:
            assert f"`{tool}`" in gt["reference_guidance"], (c["case_id"], tool)


def test_required_documents_exist_and_number_2_to_4(cases, articles):
    for c in cases:
        docs = c["ground_truth"]["required_documents"]
        assert 2 <= len(docs) <= 4 and len(set(docs)) == len(docs), c["case_id"]
        missing = [d for d in docs if d not in articles]
        assert not missing, (c["case_id"], missing)


def test_expected_tools_are_named_in_a_required_document(cases, articles, tools_defined):
    for c in cases:
        gt = c["ground_truth"]
        assert gt["expected_tools"], c["case_id"]
        for tool in gt["expected_tools"]:
            assert tool in tools_defined, (c["case_id"], tool)
            assert any(f"`{tool}`" in articles[d].body for d in gt["required_documents"]), (
                c["case_id"],
                tool,
            )


def test_expected_actions_use_expected_tools(cases):
    for c in cases:
        gt = c["ground_truth"]
        for action in gt.get("expected_actions", []):
            assert set(action) == {"name", "arguments"} and isinstance(action["arguments"], dict)
            assert action["name"] in gt["expected_tools"], (c["case_id"], action["name"])


def test_cases_cover_tiers_escalation_and_a_declined_request(cases):
    notes = {c["case_id"]: " ".join(c["case_notes"]) for c in cases}
    for tier in TIERS:
        assert any(re.search(rf"\b{tier}\b", n) for n in notes.values()), tier
    escalations = {"escalate_to_tier2", "escalate_to_supervisor", "flag_for_fraud_review"}
    assert sum(bool(escalations & set(c["ground_truth"]["expected_tools"])) for c in cases) >= 2
    declined = [
        c["case_id"]
        for c in cases
        if re.search(
            r"\bDo not (create|call)\b|has closed|has passed", c["ground_truth"]["reference_guidance"]
        )
    ]
    assert declined, "no case where the customer is not eligible"


def test_reference_evidence_is_verbatim_in_required_documents(cases, articles):
    rows = {r["case_id"]: r["evidence"] for r in _read_jsonl(demo_data.REFERENCE_EVIDENCE)}
    assert set(rows) == {c["case_id"] for c in cases}
    for c in cases:
        docs = set(c["ground_truth"]["required_documents"])
        ev = rows[c["case_id"]]
        assert len(ev) >= 3, c["case_id"]
        assert {e["article_id"] for e in ev} <= docs, c["case_id"]
        for e in ev:
            assert e["text"] in articles[e["article_id"]].body, (c["case_id"], e["text"][:60])


def _shingles(text: str, n: int = 8) -> set[tuple[str, ...]]:
    words = re.findall(r"[a-z0-9$%']+", text.lower())
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


@pytest.mark.shared
def test_demo_data_shares_no_8_word_run_with_the_tau2_corpus(tau2_dir):
    """Self-authored: no run of 8 words in the demo articles or cases occurs in tau2-banking."""
    ours = set()
    for p in demo_data.HELP_CENTER.glob("*.md"):
        ours |= _shingles(p.read_text(encoding="utf-8"))
    ours |= _shingles(demo_data.CASES.read_text(encoding="utf-8"))
    docs = sorted((tau2_dir / "documents").glob("*.json"))
    assert len(docs) == 698
    theirs = set()
    for p in docs:
        theirs |= _shingles(json.loads(p.read_text(encoding="utf-8"))["content"])
    shared = ours & theirs
    assert not shared, sorted(" ".join(s) for s in shared)[:5]


def test_cases_load_through_the_skill_case_file():
    """The case file is the one `skillrag.skill.CaseFile` reads: agent view without ground truth."""
    from skillrag.skill import CaseFile

    cf = CaseFile(demo_data.CASES)
    rows = {c["case_id"]: c for c in _read_jsonl(demo_data.CASES)}
    assert sorted(cf.ids()) == sorted(rows)
    for cid, row in rows.items():
        case = cf.load(cid)
        assert "ground_truth" not in case.model_dump()
        assert case.n_messages == len(row["case_messages"]) and case.n_notes == len(row["case_notes"])
        gt = cf.ground_truth(cid)
        assert gt.required_documents == row["ground_truth"]["required_documents"]
        assert gt.expected_tools == row["ground_truth"]["expected_tools"]
        assert gt.expected_actions == row["ground_truth"]["expected_actions"]
