"""A small corpus that exercises what the inspector must show, and the page built from it."""

from __future__ import annotations

from pathlib import Path

CODE_LINES = "\n".join(f"    total += price({n}) * weight({n})  # строка {n}" for n in range(1, 13))
TABLE_ROWS = "\n".join(f"| строка {n} | {n * 10} ₽ | зона {n % 3 + 1} |" for n in range(1, 25))

RU = f"""---
title: Доставка
---
# Доставка

Мы доставляем по всей России. Сроки зависят от зоны.

<script>window.__pwned = 1; document.title = "pwned";</script>

Текст с тегом <img src="x" onerror="window.__pwned = 2"> внутри абзаца.

## Тарифы {{#tariffs}}

| Вес | Цена | Зона |
|-----|------|------|
{TABLE_ROWS}

## Пример кода

```html
<script>window.__pwned = 3;</script>
</script><b>не жирный</b>
```

## Расчёт

```python
def cost():
    total = 0
{CODE_LINES}
    return total
```
"""

CJK = """# 配送说明

我们在全国范围内提供配送服务。配送时间取决于地区。

## 退货

收到商品后七天内可以退货。请保留原包装和发票。
"""


def write_corpus(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "ru.md").write_text(RU, encoding="utf-8")
    (root / "cjk.md").write_text(CJK, encoding="utf-8")
    return root
