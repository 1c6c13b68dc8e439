"""The quality tier's model fits every text into its window instead of letting it fail."""

from __future__ import annotations

import pytest

from narezka.embed.base import HashEmbedder, WordCounter
from narezka.embed.rescore import RescoreModel, fit_window, rescore_model
from narezka.errors import ConfigError


def test_a_text_over_the_window_is_cut_to_its_longest_head_that_fits() -> None:
    counter = WordCounter()
    short, long = "one two three", " ".join(f"w{i}" for i in range(500))
    fitted = fit_window([short, long], counter, 100)
    assert fitted[0] == short
    assert long.startswith(fitted[1]) and counter.count(fitted[1]) <= 100
    assert counter.count(fitted[1]) >= 90  # cut near the window, not far below it
    assert fit_window([long], counter, None) == [long]


def test_the_model_embeds_texts_a_windowed_embedder_would_refuse() -> None:
    model = RescoreModel("hash", HashEmbedder(16, max_tokens=20))
    long = " ".join(f"w{i}" for i in range(200))
    assert model.passages(["short text", long]).shape == (2, 16)
    assert model.query(long).shape == (1, 16)


def test_an_unknown_or_switched_off_tier_is_refused() -> None:
    with pytest.raises(ConfigError, match="rescore must be one of"):
        rescore_model("bge")
    with pytest.raises(ConfigError, match="rescore is off"):
        rescore_model("off")
