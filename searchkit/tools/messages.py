"""The one message catalogue of both tools, in Russian, English and Japanese: history search
(H11-H14; Russian is the seed's wording) and task search (keys ``task.*``, T5-T8; Japanese is its
seed's). Keys are stable; ``message(lang, key, **values)`` formats one, and ``counted(lang, key, n,
**values)`` one that states a count: ``KEY_one`` where the language has it and ``n`` is 1 (English:
"1 message"; Russian and Japanese say a count in a form that fits every number: «сообщений: 1»,
「メッセージ 1 件」)."""
from __future__ import annotations

LANGS: tuple[str, ...] = ("ru", "en", "ja")

CATALOGUE: dict[str, dict[str, str]] = {
    "ru": {
        "searched": "Искал в пространствах: {spaces}.",
        "searched_none": "Поиск не выполнен: нет пространств, где можно искать.",
        "skipped": "Пропущены: {items}.",
        "skip_sep": "; ",
        "sentence_sep": " ",
        "id_sep": ", ",
        "not_member": "{slug} — вы не участник",
        "history_search_off": "{slug} — поиск по истории выключен",
        "space_limit": "{slug} — больше 60 пространств за поиск",
        "access_unknown": "{slug} — не удалось проверить доступ",
        "your_spaces": "Ваши пространства: {spaces}.",
        "weak_match": "Слабое совпадение: ни одна карточка не выделяется среди остальных.",
        "missing_ids": "Ни одна карточка не упоминает {ids}.",
        "reminder": "Ответ — это открытый источник, а не карточка: откройте ref, прежде чем опираться на деталь.",
        "nothing": "Ничего не найдено.",
        "chat.total": "сообщений: {n}",
        "chat.total_one": "сообщений: 1",
        "chat.found": "Сообщений с «{find}»: {n}; показаны самые новые, каждое с соседями.",
        "chat.found_one": "Одно сообщение с «{find}»; оно показано с соседями.",
        "chat.found_none": "Ни одно сообщение не содержит «{find}».",
        "chat.found_none_before": "Ни одно сообщение до позиции {before} не содержит «{find}».",
        "chat.none": "Сообщений нет.",
        "chat.cut": "[обрезано: {before} символов до, {after} после]",
        "chat.before": "Раньше: передайте before={before}, чтобы читать дальше назад.",
        "chat.start": "Это начало чата.",
        "chat.no_older": "Более ранних сообщений с этим текстом нет.",
        "row.cut": "[обрезано: ещё {n} символов]",
        "row.changed": "Строка изменилась после индексации: это значения из таблицы сейчас.",
        "row.gone": "Строки больше нет в таблице: её удалили после индексации.",
        "row.withheld": "Правила индексации теперь исключают эту таблицу: значения строки не показываются.",
        "row.as_indexed": "Таблицу сейчас не удалось прочитать: это значения на момент индексации, они могут быть устаревшими.",
        "chat.changed": "Чат изменился после индексации: здесь он в нынешнем виде.",
        "chat.as_indexed": "Чат сейчас не удалось прочитать: он показан на момент индексации и мог устареть.",
        "task.no_auth": 'Недоступно в этом контексте (запуск без вошедшего владельца).',
        "task.subtask": 'Недоступно в этом контексте (запуск подзадачи).',
        "task.no_fts5": 'Поиск по задачам пространства недоступен: в этом SQLite нет FTS5 с токенизатором trigram.',
        "task.split": 'Примечание: по «{original}» ничего не нашлось, поэтому запрос разбит по частицам и знакам препинания и повторён как «{split}».',
        "task.none": 'Подходящих комментариев нет.',
        "task.hint": 'Чтобы прочитать соседние комментарии, передайте around_ref: "comment:<id>".',
        "task.around": '## Workspace Task Search — task:{task} "{title}" (comment:{comment}, соседних комментариев: {n})',
        "task.list": '## Workspace Tasks (space: {space}{state}, задач: {n})',
        "task.state_open": 'открыта',
        "task.state_closed": 'закрыта',
        "task.updated": 'обновлена',
        "task.list_none": 'Других задач нет.',
        "task.list_hint": 'Чтобы искать внутри задачи, передайте query вместе с task_id.',
    },
    "en": {
        "searched": "Searched spaces: {spaces}.",
        "searched_none": "Nothing searched: no space left to search.",
        "skipped": "Skipped: {items}.",
        "skip_sep": "; ",
        "sentence_sep": " ",
        "id_sep": ", ",
        "not_member": "{slug} — you are not a member",
        "history_search_off": "{slug} — history search is switched off",
        "space_limit": "{slug} — over 60 spaces a search",
        "access_unknown": "{slug} — access could not be checked",
        "your_spaces": "Your spaces: {spaces}.",
        "weak_match": "Weak match: no card stands out from the rest.",
        "missing_ids": "No card mentions {ids}.",
        "reminder": "The answer is the opened source, not the card: open the ref before relying on a detail.",
        "nothing": "Nothing found.",
        "chat.total": "{n} messages",
        "chat.total_one": "1 message",
        "chat.found": "Messages holding \"{find}\": {n}; the newest are shown, each with its neighbours.",
        "chat.found_one": "One message holds \"{find}\"; it is shown with its neighbours.",
        "chat.found_none": "No message holds \"{find}\".",
        "chat.found_none_before": "No message before position {before} holds \"{find}\".",
        "chat.none": "No messages.",
        "chat.cut": "[cut: {before} characters before, {after} after]",
        "chat.before": "Older: pass before={before} to read further back.",
        "chat.start": "This is the start of the chat.",
        "chat.no_older": "No older message holds this text.",
        "row.cut": "[cut: {n} more characters]",
        "row.changed": "Changed since it was indexed: these are the table's values now.",
        "row.gone": "No longer in the table: the row was deleted after it was indexed.",
        "row.withheld": "The never-index rules leave this table out now: none of the row's values are shown.",
        "row.as_indexed": "Could not read the table now: these are the values as indexed, and may be out of date.",
        "chat.changed": "Changed since it was indexed: this is the chat as it is now.",
        "chat.as_indexed": "Could not read the chat now: this is the chat as indexed, and may be out of date.",
        "task.no_auth": 'Not available in this context (the run has no signed-in owner).',
        "task.subtask": 'Not available in this context (a subtask run).',
        "task.no_fts5": 'Workspace task search is not available: this SQLite has no FTS5 with the trigram tokenizer.',
        "task.split": 'Note: "{original}" found nothing, so it was split at particles and punctuation and searched again as "{split}".',
        "task.none": 'No matching comments.',
        "task.hint": 'To read the surrounding comments, pass around_ref: "comment:<id>".',
        "task.around": '## Workspace Task Search — task:{task} "{title}" (comment:{comment}, {n} neighbouring comment(s))',
        "task.list": '## Workspace Tasks (space: {space}{state}, {n} task(s))',
        "task.state_open": 'open',
        "task.state_closed": 'closed',
        "task.updated": 'updated',
        "task.list_none": 'There are no other tasks.',
        "task.list_hint": 'To search inside a task, pass query with task_id.',
    },
    "ja": {
        "searched": "検索したスペース: {spaces}。",
        "searched_none": "検索していません: 検索できるスペースがありません。",
        "skipped": "検索しなかったスペース: {items}。",
        "skip_sep": "、",
        "sentence_sep": "",
        "id_sep": "、",
        "not_member": "{slug}（メンバーではありません）",
        "history_search_off": "{slug}（履歴検索がオフです）",
        "space_limit": "{slug}（1 回の検索は 60 スペースまで）",
        "access_unknown": "{slug}（アクセス権を確認できませんでした）",
        "your_spaces": "あなたのスペース: {spaces}。",
        "weak_match": "弱い一致: 他より際立つカードがありません。",
        "missing_ids": "どのカードも {ids} に言及していません。",
        "reminder": "答えはカードではなく開いた元の情報です。細部に頼る前に ref を開いてください。",
        "nothing": "見つかりませんでした。",
        "chat.total": "メッセージ {n} 件",
        "chat.total_one": "メッセージ 1 件",
        "chat.found": "「{find}」を含むメッセージ: {n} 件。新しいものから前後のメッセージと一緒に表示します。",
        "chat.found_one": "「{find}」を含むメッセージ: 1 件。前後のメッセージと一緒に表示します。",
        "chat.found_none": "「{find}」を含むメッセージはありません。",
        "chat.found_none_before": "位置 {before} より前に「{find}」を含むメッセージはありません。",
        "chat.none": "メッセージはありません。",
        "chat.cut": "[省略: 前 {before} 文字、後 {after} 文字]",
        "chat.before": "さらに前を読むには before={before} を指定してください。",
        "chat.start": "ここがチャットの最初です。",
        "chat.no_older": "これより前にこのテキストを含むメッセージはありません。",
        "row.cut": "[省略: 残り {n} 文字]",
        "row.changed": "インデックス作成後に変更されています。以下はテーブルの現在の値です。",
        "row.gone": "この行はもうテーブルにありません（インデックス作成後に削除されました）。",
        "row.withheld": "このテーブルは現在インデックス対象外のため、行の値は表示しません。",
        "row.as_indexed": "現在テーブルを読み取れませんでした。以下はインデックス作成時の値で、古い可能性があります。",
        "chat.changed": "インデックス作成後にチャットが変更されています。現在の内容を表示しています。",
        "chat.as_indexed": "現在チャットを読み取れませんでした。インデックス作成時の内容で、古い可能性があります。",
        "task.no_auth": 'このコンテキストでは利用できません(サインインしたオーナーに紐づかない実行です)。',
        "task.subtask": 'このコンテキストでは利用できません(subtask 実行です)。',
        "task.no_fts5": 'この環境の SQLite は FTS5(trigram)に対応していないため、ワークスペースのタスク検索は利用できません。',
        "task.split": '注記: 「{original}」は 0 件だったため、助詞・句読点で分割した「{split}」で再検索しました。',
        "task.none": '該当するコメントはありませんでした。',
        "task.hint": '前後の文脈をさらに確認するには around_ref: "comment:<id>" を指定してください。',
        "task.around": '## Workspace Task Search — task:{task} "{title}" (comment:{comment} 前後 {n} 件)',
        "task.list": '## Workspace Tasks (space: {space}{state}, {n} 件)',
        "task.state_open": '進行中',
        "task.state_closed": '完了',
        "task.updated": '最終更新',
        "task.list_none": '他のタスクはありません。',
        "task.list_hint": '中身を検索するには query と task_id を指定してください。',
    },
}


def message(lang: str, key: str, **values: str) -> str:
    """One message of the catalogue; ``lang`` must be in ``LANGS``."""
    if lang not in CATALOGUE:
        raise ValueError(f"lang must be one of {list(LANGS)}, got {lang!r}")
    return CATALOGUE[lang][key].format(**values)


def counted(lang: str, key: str, n: int, **values: str) -> str:
    """``message`` for a count ``n``: the ``KEY_one`` form when ``n`` is 1 and ``lang`` has one."""
    if lang not in CATALOGUE:
        raise ValueError(f"lang must be one of {list(LANGS)}, got {lang!r}")
    one = f"{key}_one"
    return CATALOGUE[lang][one if n == 1 and one in CATALOGUE[lang] else key].format(n=str(n), **values)


def task_messages(lang: str) -> dict[str, str]:
    """The task search messages of ``lang`` without their ``task.`` prefix."""
    if lang not in CATALOGUE:
        raise ValueError(f"unknown language {lang!r}; valid: {', '.join(LANGS)}")
    return {k[len("task."):]: v for k, v in CATALOGUE[lang].items() if k.startswith("task.")}
