"""The message catalogue of history search (H11-H14), in Russian (the seed's wording), English and
Japanese. Keys are stable; ``message(lang, key, **values)`` formats one."""
from __future__ import annotations

LANGS: tuple[str, ...] = ("ru", "en", "ja")

CATALOGUE: dict[str, dict[str, str]] = {
    "ru": {
        "searched": "Искал в пространствах: {spaces}.",
        "searched_none": "Поиск не выполнен: нет пространств, где можно искать.",
        "skipped": "Пропущены: {items}.",
        "skip_sep": "; ",
        "not_member": "{slug} — вы не участник",
        "history_search_off": "{slug} — поиск по истории выключен",
        "space_limit": "{slug} — больше 60 пространств за поиск",
        "your_spaces": "Ваши пространства: {spaces}.",
        "weak_match": "Слабое совпадение: ни одна карточка не выделяется среди остальных.",
        "missing_ids": "Ни одна карточка не упоминает {ids}.",
        "reminder": "Ответ — это открытый источник, а не карточка: откройте ref, прежде чем опираться на деталь.",
        "nothing": "Ничего не найдено.",
    },
    "en": {
        "searched": "Searched spaces: {spaces}.",
        "searched_none": "Nothing searched: no space left to search.",
        "skipped": "Skipped: {items}.",
        "skip_sep": "; ",
        "not_member": "{slug} — you are not a member",
        "history_search_off": "{slug} — history search is switched off",
        "space_limit": "{slug} — over 60 spaces a search",
        "your_spaces": "Your spaces: {spaces}.",
        "weak_match": "Weak match: no card stands out from the rest.",
        "missing_ids": "No card mentions {ids}.",
        "reminder": "The answer is the opened source, not the card: open the ref before relying on a detail.",
        "nothing": "Nothing found.",
    },
    "ja": {
        "searched": "検索したスペース: {spaces}。",
        "searched_none": "検索していません: 検索できるスペースがありません。",
        "skipped": "スキップ: {items}。",
        "skip_sep": "、",
        "not_member": "{slug} — メンバーではありません",
        "history_search_off": "{slug} — 履歴検索がオフです",
        "space_limit": "{slug} — 1 回の検索は 60 スペースまで",
        "your_spaces": "あなたのスペース: {spaces}。",
        "weak_match": "弱い一致: 他より際立つカードがありません。",
        "missing_ids": "どのカードも {ids} に言及していません。",
        "reminder": "答えはカードではなく開いた元の情報です。細部に頼る前に ref を開いてください。",
        "nothing": "見つかりませんでした。",
    },
}


def message(lang: str, key: str, **values: str) -> str:
    """One message of the catalogue; ``lang`` must be in ``LANGS``."""
    if lang not in CATALOGUE:
        raise ValueError(f"lang must be one of {list(LANGS)}, got {lang!r}")
    return CATALOGUE[lang][key].format(**values)
