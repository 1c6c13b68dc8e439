"""A deterministic Markdown corpus for tests that need many real-looking files but must run
on a machine without the shared md_corpus: nested folders, Russian and English, headings
three levels deep, paragraphs, lists, code blocks and tables, sizes spread from a few
hundred bytes to tens of kilobytes (md_corpus's spread: median ~1 KB, one in ten over 15 KB).
"""

from __future__ import annotations

import random
from pathlib import Path

RU_WORDS = (
    "доставка курьер тариф зона возврат чай кофе гарантия заказ оплата карта склад "
    "пункт выдачи срок неделя договор покупатель продавец товар упаковка вес адрес "
    "функция параметр значение запрос ответ сервер клиент модуль объект массив строка"
).split()
EN_WORDS = (
    "order shipping tariff zone return tea coffee warranty payment card warehouse pickup "
    "point week contract buyer seller item package weight address function parameter "
    "value request response server client module object array string dependency path"
).split()
CODE_LINES = (
    "def handler(request):",
    "    return {'status': 'ok'}",
    "const items = await fetch('/api/items');",
    "let total = items.reduce((a, b) => a + b, 0);",
    "# not a heading inside a fence",
    'fn main() { println!("привет"); }',
)


def _sentence(rng: random.Random, words: list[str]) -> str:
    chosen = rng.choices(words, k=rng.randint(4, 16))
    return " ".join([chosen[0].capitalize(), *chosen[1:]]) + rng.choice(".!?.")


def _paragraph(rng: random.Random, words: list[str]) -> str:
    return " ".join(_sentence(rng, words) for _ in range(rng.randint(1, 6)))


def _block(rng: random.Random, words: list[str]) -> str:
    kind = rng.random()
    if kind < 0.12:
        lines = rng.choices(CODE_LINES, k=rng.randint(1, 12))
        return "\n".join([f"```{rng.choice(['', 'python', 'js', 'rust'])}", *lines, "```"])
    if kind < 0.2:
        header = "| " + " | ".join(rng.sample(words, 3)) + " |\n|---|---|---:|"
        rows = [
            f"| {rng.choice(words)} | {rng.choice(words)} | {rng.randint(1, 999)} |"
            for _ in range(rng.randint(1, 15))
        ]
        return "\n".join([header, *rows])
    if kind < 0.32:
        return "\n".join(f"- {_sentence(rng, words)}" for _ in range(rng.randint(2, 7)))
    return _paragraph(rng, words)


def document(rng: random.Random, words: list[str]) -> str:
    """One Markdown file: a title, then sections and subsections of mixed blocks."""
    # Blocks per section, weighted so that the sizes match md_corpus's (measured on 4,000
    # drawn files: median 1.1 KB, 11% over 15 KB, mean 5.5 KB; md_corpus: 1.0 KB, 10%, 5.1 KB).
    size = rng.choices([1, 2, 4, 8, 16, 40], weights=[58, 12, 8, 5, 5, 12])[0]
    parts = [f"# {_sentence(rng, words).rstrip('.!?')}"]
    for _ in range(rng.randint(1, 2 if size < 8 else 5)):
        parts.append(f"## {rng.choice(words).capitalize()} {rng.choice(words)}")
        parts.extend(_block(rng, words) for _ in range(rng.randint(1, size)))
        if rng.random() < 0.4:
            parts.append(f"### {rng.choice(words).capitalize()}")
            parts.extend(_block(rng, words) for _ in range(rng.randint(1, size)))
    return "\n\n".join(parts) + "\n"


def write_corpus(dest: Path, per_language: int, seed: int = 0) -> list[Path]:
    """Write ``per_language`` files each of Russian (``ru/``) and English (``en/``), spread
    over nested folders (past the first thousand, a folder per thousand, as real trees
    never hold 100,000 files in one folder); the same arguments always write the same bytes."""
    rng = random.Random(seed)
    written = []
    for language, words in (("ru", RU_WORDS), ("en", EN_WORDS)):
        for number in range(per_language):
            group = f"g{number // 1000:04d}" if number >= 1000 else ""
            folder = dest / language / f"part{number % 3}" / group
            folder = folder / ("deep" if number % 5 == 0 else "")
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"doc{number:03d}.md"
            path.write_text(document(rng, words), encoding="utf-8")
            written.append(path)
    return written
