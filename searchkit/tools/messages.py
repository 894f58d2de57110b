"""The one message catalogue of both tools, in Russian, English and Japanese: history search
(H11-H14; Russian is the seed's wording) and task search (keys ``task.*``, T5-T8; Japanese is its
seed's). Keys are stable; ``message(lang, key, **values)`` formats one."""
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


def task_messages(lang: str) -> dict[str, str]:
    """The task search messages of ``lang`` without their ``task.`` prefix."""
    if lang not in CATALOGUE:
        raise ValueError(f"unknown language {lang!r}; valid: {', '.join(LANGS)}")
    return {k[len("task."):]: v for k, v in CATALOGUE[lang].items() if k.startswith("task.")}
