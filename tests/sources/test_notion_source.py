"""A Notion database or page tree read through the Notion API, against a local fake of the
documented endpoints (``live_fakes``; no live service is reached): blocks rendered to Markdown,
child pages staged below their parents, an unchanged ``last_edited_time`` not fetched again, a
deleted page removed, 401/429 handled by name, and the token kept out of the index, the state
and logs."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from click.testing import CliRunner

from narezka.cli import cli
from narezka.environment import current
from narezka.errors import ConfigError, SourceUnavailableError
from narezka.index import Index
from narezka.settings import Settings
from narezka.sources import NotionSource, is_source_spec, open_source, source_from_record
from narezka.sources.live_http import LiveLimits
from narezka.sources.notion_blocks import render
from sources.live_fakes import DATABASE, FakeNotion, NPage, block, serve, text, uuid

SETTINGS = Settings().replace(embedder="hash", unit="chars", size=400, min_chars=0)

RETURNS = uuid("a" * 32)
OOLONG = uuid("b" * 32)
DELIVERY = uuid("c" * 32)


def workspace() -> FakeNotion:
    fake = FakeNotion()
    fake.pages = {
        RETURNS: NPage(
            "Возврат",
            [
                block("heading_1", "Как вернуть"),
                block("paragraph", "Вскрытый чай возвращается в течение 14 дней."),
                block(
                    "bulleted_list_item",
                    "С чеком",
                    children=[block("bulleted_list_item", "или выпиской", block_id="nested-1")],
                ),
                block("to_do", "Проверить упаковку", checked=True),
                block("callout", "Только для розницы", icon={"emoji": "💡"}),
                block("code", "return_tea(order)", language="python"),
                {
                    "object": "block",
                    "id": OOLONG,
                    "type": "child_page",
                    "has_children": True,
                    "_children": [],
                    "child_page": {"title": "Улун"},
                },
            ],
        ),
        OOLONG: NPage("Улун", [block("quote", "Улун можно вернуть вскрытым.")], parent=RETURNS),
        DELIVERY: NPage(
            "Доставка",
            [
                block("numbered_list_item", "Курьером"),
                block("numbered_list_item", "Почтой"),
                {
                    "object": "block",
                    "id": "table-1",
                    "type": "table",
                    "has_children": True,
                    "table": {"table_width": 2},
                    "_children": [
                        {
                            "object": "block",
                            "id": "r1",
                            "type": "table_row",
                            "has_children": False,
                            "table_row": {"cells": [text("Город"), text("Срок")]},
                        },
                        {
                            "object": "block",
                            "id": "r2",
                            "type": "table_row",
                            "has_children": False,
                            "table_row": {"cells": [text("Москва"), text("1 день")]},
                        },
                    ],
                },
            ],
        ),
    }
    return fake


@pytest.fixture
def token(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("NOTION_TOKEN", FakeNotion().token)
    return FakeNotion().token


def block_reads(fake: FakeNotion) -> list[str]:
    return sorted({p.split("/")[3] for p in fake.paths() if p.startswith("/v1/blocks/")})


def test_a_database_is_staged_and_only_a_changed_page_fetched_again(token: str) -> None:
    with serve(workspace()) as fake:
        source = open_source(f"notion+{fake.url}/{DATABASE}", env=current())
        assert isinstance(source, NotionSource)
        first = source.refresh()
        assert first.fetched == ("Возврат.md", "Возврат/Улун.md", "Доставка.md")
        assert len(fake.paths("POST")) == 1  # two rows: one answer
        returns = (source.staging / "Возврат.md").read_text()
        assert returns.startswith("# Возврат\n\n- **Status**: Done\n\n## Как вернуть\n")
        assert "- С чеком\n   - или выпиской" in returns
        assert "- [x] Проверить упаковку" in returns and "> 💡 Только для розницы" in returns
        assert "```python\nreturn_tea(order)\n```" in returns and "Улун" not in returns
        delivery = (source.staging / "Доставка.md").read_text()
        assert "1. Курьером\n2. Почтой" in delivery
        assert "| Город | Срок |\n| --- | --- |\n| Москва | 1 день |" in delivery
        assert "> Улун можно вернуть вскрытым." in (source.staging / "Возврат/Улун.md").read_text()
        assert source.link("Возврат/Улун.md", None) == f"https://www.notion.so/Улун-{'b' * 32}"

        fake.log.clear()
        fake.pages[OOLONG].blocks = [block("quote", "Улун вернуть нельзя.")]
        fake.pages[OOLONG].edited = "2025-02-01T00:00:00.000Z"
        second = source.refresh()
        assert second.fetched == ("Возврат/Улун.md",) and second.deleted == ()
        assert block_reads(fake) == [OOLONG]  # the unchanged pages' blocks were not read

        fake.log.clear()
        del fake.pages[DELIVERY]
        third = source.refresh()
        assert third.deleted == ("Доставка.md",) and third.fetched == ()
        assert block_reads(fake) == [] and not (source.staging / "Доставка.md").exists()


def test_a_child_page_taken_out_of_its_parent_leaves(token: str) -> None:
    with serve(workspace()) as fake:
        source = NotionSource(
            f"notion+{fake.url}/{RETURNS}", env=current()
        )  # a page, not the database
        assert source.refresh().fetched == ("Возврат.md", "Возврат/Улун.md")
        fake.pages[RETURNS].blocks = fake.pages[RETURNS].blocks[:-1]
        fake.pages[RETURNS].edited = "2025-03-01T00:00:00.000Z"
        del fake.pages[OOLONG]
        done = source.refresh()
        assert done.fetched == ("Возврат.md",) and done.deleted == ("Возврат/Улун.md",)


def test_a_database_is_indexed_linked_and_the_token_kept_out_of_everything(
    token: str, private_cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with serve(workspace()) as fake:
        spec = f"notion+{fake.url}/{DATABASE}"
        with Index.create(spec, SETTINGS) as index:
            report = index.sync()
            hits = index.search("улун вскрытым", k=1, mode="bm25")
        assert report.files_new == 3
        assert hits[0].file_path == "Возврат/Улун.md"
        assert hits[0].link == f"https://www.notion.so/Улун-{'b' * 32}"
        assert {auth for _, _, auth in fake.log} == {f"Bearer {token}"}
    files = [p for p in private_cache.rglob("*") if p.is_file()]
    assert any(p.name == "state.json" for p in files)
    for path in files:
        assert token.encode() not in path.read_bytes(), path
    assert token not in caplog.text
    reopened = source_from_record(open_source(spec, env=current()).record(), "test")
    assert (
        isinstance(reopened, NotionSource)
        and reopened.spec == f"notion+{fake.url}/{uuid(DATABASE)}"
    )


def test_a_refused_or_missing_token_is_named_never_shown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with serve(workspace()) as fake:
        monkeypatch.setenv("NOTION_TOKEN", "ntn_wrong_ABC")
        with pytest.raises(SourceUnavailableError, match=r"NOTION_TOKEN.*401") as refused:
            open_source(f"notion+{fake.url}/{DATABASE}", env=current()).refresh()
        assert "ntn_wrong_ABC" not in str(refused.value)
        monkeypatch.delenv("NOTION_TOKEN")
        with pytest.raises(SourceUnavailableError, match="no token: set NOTION_TOKEN"):
            open_source(f"notion+{fake.url}/{DATABASE}", env=current()).refresh()


def test_an_id_no_integration_shares_is_named(token: str) -> None:
    with serve(workspace()) as fake, pytest.raises(SourceUnavailableError, match="shared"):
        open_source(f"notion+{fake.url}/{'e' * 32}", env=current()).refresh()


def test_a_rate_limit_is_waited_out(token: str) -> None:
    with serve(workspace()) as fake:
        fake.throttle["/v1/blocks/"] = 3
        source = open_source(f"notion+{fake.url}/{DATABASE}", env=current())
        done = source.refresh()
    assert len(done.fetched) == 3 and fake.throttle["/v1/blocks/"] == 0  # 3 × 429 waited out
    assert "Вскрытый чай" in (source.staging / "Возврат.md").read_text()


def test_spellings() -> None:
    page = "https://www.notion.so/Handbook-" + "1" * 32
    assert NotionSource(f"notion://{page}", env=current()).spec == f"notion://{uuid('1' * 32)}"
    assert NotionSource(f"notion://{uuid('1' * 32)}", env=current()).api == "https://api.notion.com"
    assert is_source_spec("notion://" + "1" * 32)
    with pytest.raises(ConfigError, match="32 hex digits"):
        open_source("notion://handbook")
    with pytest.raises(SourceUnavailableError, match="https only"):
        NotionSource("notion+http://notion.example.org/" + "1" * 32).refresh()


def test_columns_and_synced_blocks_are_not_indented_into_code() -> None:
    column = {"id": "col", "type": "column", "has_children": True, "column": {}}
    words = {"type": "paragraph", "paragraph": {"rich_text": text("В колонке.")}}
    nested = {"col-list": [column], "col": [words]}
    top = [{"id": "col-list", "type": "column_list", "has_children": True, "column_list": {}}]
    assert render(top, lambda block_id: nested[block_id]).markdown == "В колонке.\n"


def test_rich_text_keeps_its_marks_and_links() -> None:
    rich = [
        {"plain_text": "жирный", "annotations": {"bold": True}},
        {"plain_text": " и ", "annotations": {}},
        {"plain_text": "ссылка", "annotations": {"italic": True}, "href": "https://x.org/"},
        {"plain_text": " ", "annotations": {}},
        {"plain_text": "код", "annotations": {"code": True}},
    ]
    done = render([{"type": "paragraph", "paragraph": {"rich_text": rich}}], lambda _: [])
    assert done.markdown == "**жирный** и [*ссылка*](https://x.org/) `код`\n"


def test_the_command_line_indexes_searches_and_syncs_a_notion_database(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with serve(workspace()) as fake:
        spec = f"notion+{fake.url}/{DATABASE}"
        runner = CliRunner()
        missing = runner.invoke(cli, ["index", spec, "--embedder", "hash"])
        assert missing.exit_code == 2 and "no token: set NOTION_TOKEN" in missing.stderr
        monkeypatch.setenv("NOTION_TOKEN", fake.token)
        done = runner.invoke(cli, ["index", spec, "--embedder", "hash", "--json"])
        assert done.exit_code == 0, done.output
        assert len(json.loads(done.stdout)["source"]["fetched"]) == 3
        found = runner.invoke(
            cli, ["search", "улун вскрытым", "--store", spec, "--mode", "bm25", "--format", "json"]
        )
        assert found.exit_code == 0, found.output
        assert json.loads(found.stdout)[0]["link"] == f"https://www.notion.so/Улун-{'b' * 32}"
        fake.log.clear()
        synced = runner.invoke(cli, ["sync", spec])
        assert synced.exit_code == 0, synced.output
        assert "0 fetched" in synced.stdout + synced.stderr and block_reads(fake) == []
        assert fake.token not in done.output + found.output + synced.output


NO_WAIT = LiveLimits(retry_delays=(0.0, 0.0))


def test_an_inline_database_is_a_table_in_its_page(token: str) -> None:
    fake = workspace()
    tasks = "f" * 32
    fake.pages[DELIVERY].blocks.append(
        {"object": "block", "id": uuid(tasks), "type": "child_database", "has_children": False,
         "child_database": {"title": "Тарифы"}}
    )  # fmt: skip
    fake.inline[tasks] = [
        {"Город": {"type": "title", "title": text("Москва")},
         "Цена": {"type": "number", "number": 300},
         "Срочно": {"type": "checkbox", "checkbox": True}},
        {"Город": {"type": "title", "title": text("Казань | Татарстан")},
         "Цена": {"type": "number", "number": 450},
         "Срочно": {"type": "checkbox", "checkbox": False}},
        {"Город": {"type": "title", "title": text("Сочи")},
         "Цена": {"type": "number", "number": 500}},
    ]  # fmt: skip
    with serve(fake) as fake:
        source = NotionSource(f"notion+{fake.url}/{DATABASE}", env=current(), limits=NO_WAIT)
        assert "Доставка.md" in source.refresh().fetched
        delivery = (source.staging / "Доставка.md").read_text()
    # The title column first, then the others by name.
    assert "**Тарифы**\n\n| Город | Срочно | Цена |\n| --- | --- | --- |\n" in delivery
    assert "| Москва | yes | 300 |\n| Казань \\| Татарстан | no | 450 |\n| Сочи |  | 500 |" in (
        delivery
    )
    assert "(a database)" not in delivery
    assert [p for p in fake.paths("POST") if tasks in p.replace("-", "")]  # asked once


def test_a_page_that_fails_for_now_keeps_its_staged_copy_and_children(token: str) -> None:
    with serve(workspace()) as fake:
        source = NotionSource(f"notion+{fake.url}/{DATABASE}", env=current(), limits=NO_WAIT)
        source.refresh()
        fake.pages[RETURNS].edited = "2025-04-01T00:00:00.000Z"
        fake.pages[RETURNS].blocks[1] = block("paragraph", "Вскрытый чай не возвращается.")
        fake.fail[f"/v1/blocks/{RETURNS}/children"] = [500, 502, 500]
        done = source.refresh()
        assert done.fetched == () and done.deleted == ()  # Улун, its child, stays too
        assert any(w.startswith("Возврат: ") and "answered 500 (3 tries): kept as it was" in w
                   for w in done.warnings)  # fmt: skip
        assert "в течение 14 дней" in (source.staging / "Возврат.md").read_text()
        assert (source.staging / "Возврат" / "Улун.md").is_file()
        again = source.refresh()
        assert again.fetched == ("Возврат.md",) and again.deleted == ()
        assert "не возвращается" in (source.staging / "Возврат.md").read_text()


def test_a_database_that_cannot_be_listed_stops_the_refresh_and_deletes_nothing(
    token: str,
) -> None:
    with serve(workspace()) as fake:
        source = NotionSource(f"notion+{fake.url}/{DATABASE}", env=current(), limits=NO_WAIT)
        source.refresh()
        fake.fail[f"/v1/databases/{uuid(DATABASE)}/query"] = [502] * 3
        with pytest.raises(SourceUnavailableError, match=r"answered 502 \(3 tries\)"):
            source.refresh()
        assert sorted(p.name for p in source.staging.rglob("*.md")) == [
            "Возврат.md", "Доставка.md", "Улун.md"
        ]  # fmt: skip
