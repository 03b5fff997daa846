"""The one analyzer: the BM25 index's terms, named stop lists, settings for the manifest."""

import pytest

import skillrag.text as text_pkg
from skillrag.errors import ConfigError
from skillrag.text import STOP_WORDS, STOPWORDS_EN, STOPWORDS_EN_PLUS, Analyzer, stem


def test_the_bm25_terms_are_bm25s_tokens_less_stop_words_stemmed():
    import bm25s

    text = "The customer's cards were declined at 2 ATMs; e-mail card_id 42 Überweisung"
    plain = bm25s.tokenize([text], stopwords="en", return_ids=False, show_progress=False)[0]
    assert Analyzer("en", None).terms(text) == plain
    assert Analyzer().terms(text) == [stem(w) for w in plain]


def test_named_lists_and_options():
    assert len(STOPWORDS_EN) == 33 and STOPWORDS_EN < STOPWORDS_EN_PLUS < STOP_WORDS
    content = Analyzer("content", "english", min_chars=3, numbers=False)
    assert content.terms("Please help me close my 2 accounts, thanks") == ["close", "account"]
    assert content.terms("close the Green account", exclude={"green"}) == ["close", "account"]
    assert Analyzer(None, None, tokens="alnum", min_chars=1).terms("card_id e-mail 5") == \
        ["card", "id", "e", "mail", "5"]


def test_bad_settings_are_one_line_config_errors():
    for kwargs in ({"stopwords": "klingon"}, {"stemmer": "klingon"}, {"tokens": "chars"}):
        with pytest.raises(ConfigError):
            Analyzer(**kwargs)


def test_the_manifest_names_settings_and_library_versions():
    m = Analyzer().manifest()
    assert m["stopwords"] == "en" and m["stemmer"] == "english" and m["stopword_count"] == 33
    assert set(m["versions"]) == {"PyStemmer", "bm25s"} and all(m["versions"].values())
    assert Analyzer().params() == {"stopwords": "en", "stemmer": "english"}


def test_public_api_is_pinned_and_the_layer_imports_nothing_above_it():
    assert sorted(text_pkg.__all__) == sorted(set(text_pkg.__all__))
    assert all(hasattr(text_pkg, name) for name in text_pkg.__all__)
    import ast
    import pathlib

    for path in pathlib.Path(text_pkg.__file__).parent.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            mods = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            for mod in mods:
                assert not mod.startswith("skillrag.") or mod.startswith(("skillrag.text", "skillrag.errors")), \
                    (path.name, mod)
