"""The evidence contract: every validator rule, the normalisation cases, and raw offsets."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillrag.skill.contract import ContractLimits, locate, normalize, normalize_with_map, validate_output
from skillrag.skill.testing import make_output

BODY = (
    "## Freezing the card\n\nWhen a customer reports a lost card, freeze it first.\n"
    "The customer\u2019s identity must be verified before any change \u2014 no exceptions.\n\n"
    "Order a replacement card within 2\u00a0business days.\n"
    "He said \u201cwait\u201d and left\u2026 then came back.  Twice."
)
ARTS = {"art_a": BODY, "art_b": "Premium accounts pay no fee for a replacement card."}


def out(*snips, **kw):
    return make_output("case_1", list(snips), **kw)


def test_verbatim_output_is_accepted():
    o = out(("art_a", "freeze it first"), ("art_b", "Premium accounts pay no fee"))
    assert validate_output(o, ARTS) == []


@pytest.mark.parametrize(
    "snippet",
    [
        "The customer's identity must be verified",          # straight vs curly apostrophe
        "verified before any change - no exceptions",       # hyphen vs em dash
        "verified before any change \u2013 no exceptions",  # en dash vs em dash
        "within 2 business days",                           # plain space vs NBSP
        "freeze it first. The customer\u2019s identity",    # space vs newline
        "freeze it first.\n\n   The customer's identity",   # whitespace runs collapse
        'He said "wait" and left',                          # straight vs curly double quotes
        "and left... then came back",                       # three dots vs ellipsis char
        "came back. Twice.",                                # double space in body
    ],
)
def test_normalisation_accepts_punctuation_and_whitespace_lookalikes(snippet):
    assert validate_output(out(("art_a", snippet)), ARTS) == []
    assert locate(snippet, BODY) is not None


@pytest.mark.parametrize(
    "snippet",
    [
        "FREEZE IT FIRST please",                         # case folding is not allowed
        "When a customer reports a lost card, freeze it immediately",  # paraphrase
        "freeze it first ... no exceptions",              # ellipsis stitching
        "freeze it first. no exceptions at all",          # words added
        "Premium accounts pay no fee",                    # true text, but of another article
    ],
)
def test_non_verbatim_snippets_are_rejected(snippet):
    reasons = validate_output(out(("art_a", snippet)), ARTS)
    assert reasons and "not a verbatim substring of article 'art_a'" in reasons[0]


def test_match_may_not_end_inside_an_expanded_ellipsis():
    assert locate("He said \u201cwait\u201d and left.", BODY) is None
    assert locate("He said \u201cwait\u201d and left...", BODY) is not None


def test_normalize_is_idempotent_and_only_touches_punctuation_and_space():
    s = "  \u201cA\u2019s\u201d \u2014 b\u00a0\u00a0c\u2026\n\nD\u00e9j\u00e0  "
    n = normalize(s)
    assert n == "\"A's\" - b c... D\u00e9j\u00e0"
    assert normalize(n) == n
    assert normalize("Caf\u00e9") != normalize("Cafe")  # letters untouched


@given(st.text(alphabet=st.sampled_from(
    ["a", "Z", "1", " ", "\t", "\n", "\r", "\u00a0", "\u2009", "\u3000", "\u2028", "\x1c", "\x85", "\u200b",
     "\u2018", "\u2019", "\u201c", "\u2014", "\u2212", "\u2026", "-", "'", "\"", ".", "\u00e9"]), max_size=40)
       | st.text(max_size=40))
def test_normalize_is_normalize_with_map_without_the_maps(text):
    # normalize takes a fast path (the review pages normalise whole articles many times per page)
    assert normalize(text) == normalize_with_map(text)[0]


@pytest.mark.parametrize(
    "snippet",
    [
        "The customer\u2019s identity must be verified",
        "The customer's identity must be verified",
        "verified before any change - no exceptions",
        "within 2 business days",
        "freeze it first.\nThe customer's",
        "and left... then came back",
        "came back. Twice.",
    ],
)
def test_locate_maps_to_raw_offsets(snippet):
    start, end = locate(snippet, BODY)
    raw = BODY[start:end]
    assert normalize(raw) == normalize(snippet)
    assert not raw[0].isspace() and not raw[-1].isspace()


def test_locate_exact_raw_substring_offsets():
    i = BODY.index("Order a replacement")
    assert locate("Order a replacement card", BODY) == (i, i + len("Order a replacement card"))
    assert locate("   ", BODY) is None
    assert locate("not in there at all", BODY) is None


def test_every_raw_substring_is_accepted():
    """Any substring of the body that starts and ends on a non-space character is found."""
    for start in range(0, len(BODY) - 20, 7):
        for length in (15, 40, 90):
            sub = BODY[start : start + length].strip()
            if len(normalize(sub)) >= 15:
                span = locate(sub, BODY)
                assert span is not None, sub
                assert normalize(BODY[span[0] : span[1]]) == normalize(sub)


def _reasons(o, **lim):
    return validate_output(o, ARTS, ContractLimits(**lim) if lim else None)


def test_not_an_object():
    assert _reasons([1, 2]) == ["output must be a JSON object, got list"]


def test_missing_and_unknown_fields_each_listed():
    o = out(("art_a", "freeze it first"))
    del o["guidance"], o["n_snippets"]
    o["extra"] = 1
    r = _reasons(o)
    assert "missing required field 'guidance'" in r
    assert "missing required field 'n_snippets'" in r
    assert any("unknown field 'extra'" in x for x in r)


def test_guidance_and_case_id_rules():
    o = out(("art_a", "freeze it first"))
    o["guidance"] = "   "
    o["case_id"] = "../etc/passwd"
    r = _reasons(o)
    assert "guidance: must be a non-empty string" in r
    assert any(x.startswith("case_id:") for x in r)


def test_too_many_and_too_few_snippets():
    many = out(*[("art_a", "freeze it first")] * 16)
    assert any("16 snippets, at most 15" in x for x in _reasons(many))
    assert any("3 snippets, at most 2" in x for x in _reasons(out(("art_a", "freeze it first"),
                                                                   ("art_a", "Order a replacement card"),
                                                                   ("art_b", "Premium accounts pay"),),
                                                               max_snippets=2))
    empty = out()
    assert any("0 snippets, at least 1" in x for x in _reasons(empty))


def test_n_snippets_must_match():
    o = out(("art_a", "freeze it first"))
    o["n_snippets"] = 2
    assert "n_snippets: 2 does not match the 1 snippets given" in _reasons(o)
    o["n_snippets"] = True
    assert "n_snippets: must be an integer" in _reasons(o)


def test_snippet_field_rules():
    o = out(("art_a", "freeze it first"))
    o["snippets"][0]["why"] = ""
    o["snippets"][0]["start"] = 3
    del o["snippets"][0]["source_title"]
    r = _reasons(o)
    assert "snippets[0].why: must be a non-empty string" in r
    assert "snippets[0].source_title: must be a non-empty string" in r
    assert any("snippets[0]: unknown field 'start'" in x for x in r)


def test_unknown_and_malformed_article_ids():
    o = out(("art_zzz", "freeze it first"), ("../x", "freeze it first"))
    o["articles_consulted"] = ["art_zzz"]
    r = _reasons(o)
    assert "snippets[0].source_article: unknown article 'art_zzz'" in r
    assert any(x.startswith("snippets[1].source_article: '../x' is not a plain id") for x in r)
    assert "articles_consulted: unknown article 'art_zzz'" in r


def test_min_and_max_snippet_length():
    assert any("at least 15 required" in x for x in _reasons(out(("art_a", "freeze it"))))
    assert _reasons(out(("art_a", "freeze it")), min_snippet_chars=5) == []
    assert any("at most 10 allowed" in x for x in _reasons(out(("art_a", "freeze it first")),
                                                            max_snippet_chars=10))


def test_duplicates_rejected():
    o = out(("art_a", "freeze it first"), ("art_a", "freeze  it first"))
    assert "snippets[1].text: duplicates snippets[0]" in _reasons(o)


def test_cited_article_must_be_consulted():
    o = out(("art_a", "freeze it first"))
    o["articles_consulted"] = []
    assert any("cited but not listed in articles_consulted" in x for x in _reasons(o))
    assert _reasons(o, require_consulted=False) == []


def test_every_violation_is_listed_at_once():
    o = out(("art_a", "FREEZE IT FIRST please"), ("art_b", "tiny"), ("nope", "freeze it first"))
    o["n_snippets"] = 7
    r = _reasons(o)
    assert len(r) >= 4
    assert any(x.startswith("snippets[0].text") for x in r)
    assert any(x.startswith("snippets[1].text") for x in r)
    assert any(x.startswith("snippets[2].source_article") for x in r)
    assert any(x.startswith("n_snippets") for x in r)


def test_audit_and_meta_are_allowed_objects():
    o = out(("art_a", "freeze it first"))
    o["audit"] = {"snippets": []}
    o["meta"] = {"harness": "x"}
    assert _reasons(o) == []
    o["meta"] = "x"
    assert "meta must be an object" in _reasons(o)


def test_derived_is_an_optional_list_of_value_from_how():
    o = out(("art_a", "freeze it first"))
    o["derived"] = [{"value": "$50", "from": ["$200", "$150"], "how": "annual fee $200 minus the $150 credit"}]
    assert _reasons(o) == []
    o["derived"] = {"value": "$50"}
    assert _reasons(o) == ["derived: must be a list of {value, from, how} objects"]
    o["derived"] = [{"value": "", "from": [], "how": "x", "step": 2}, "x",
                    {"value": "$5", "from": ["$1"] * 11, "how": "sum"}]
    assert _reasons(o) == [
        "derived[0]: unknown field 'step' (allowed: value, from, how)",
        "derived[0].value: must be a non-empty string",
        "derived[0].from: must be a non-empty list of the quoted figures it comes from (strings)",
        "derived[1]: must be an object with value, from, how",
        "derived[2].from: 11 items, at most 10 allowed"]
    o["derived"] = [{"value": "$1", "from": ["$1"], "how": "x"}] * 31
    assert _reasons(o) == ["derived: 31 entries, at most 30 allowed"]


@pytest.mark.shared
@pytest.mark.slow
def test_real_articles_substrings_located_and_perturbations_rejected(tau2_dir):
    """On all tau2-banking articles: raw substrings (and their punctuation/whitespace look-alike
    variants) are found at the right raw offsets; a one-word change is rejected."""
    import json
    import random

    rng = random.Random(5)
    bodies = {}
    for p in sorted((tau2_dir / "documents").glob("*.json")):
        d = json.loads(p.read_text(encoding="utf-8"))
        bodies[d["id"]] = d["content"]
    assert len(bodies) == 698
    lookalike = str.maketrans({"'": "\u2019", '"': "\u201d", "-": "\u2013", " ": "\u00a0"})
    checked = rejected = 0
    for aid, body in bodies.items():
        for _ in range(3):
            if len(body) < 60:
                break
            a = rng.randrange(0, len(body) - 50)
            sub = body[a : a + rng.randrange(30, 200)].strip()
            if len(normalize(sub)) < 15:
                continue
            for variant in (sub, sub.translate(lookalike), " \n ".join(sub.split(" "))):
                assert validate_output(make_output("c", [(aid, variant)]), {aid: body}) == [], (aid, variant)
                s, e = locate(variant, body)
                assert normalize(body[s:e]) == normalize(sub)
            checked += 1
            words = sub.split()
            k = max(range(len(words)), key=lambda j: len(words[j]))
            if words[k].isalpha():
                words[k] = words[k].swapcase()
                changed = " ".join(words)
                if normalize(changed) not in normalize(body):
                    assert locate(changed, body) is None
                    rejected += 1
    assert checked > 1500 and rejected > 1000


def test_locate_all_finds_every_copy_in_body_order():
    from skillrag.skill.contract import locate_all

    body = "Close it.\nClose \u00a0it. close it. Close it\u2026"
    assert locate_all("Close it.", body) == [(0, 9), (10, 20)]  # not the lower-case one, not before "…"
    assert locate("Close it.", body) == (0, 9) and locate_all("Close it", body, limit=1) == [(0, 8)]
    assert locate_all("Close it", body)[-1] == (body.rindex("Close it"), body.rindex("Close it") + 8)
    assert locate_all("absent", body) == [] and locate_all("  ", body) == []
