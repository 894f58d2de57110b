"""Never-index rules for tables, by their names' parts (SPEC H2; part of ``searchkit.ingest.policy``).

``name_tokens`` splits an identifier into case-folded word tokens (at case, digit and script
changes, NFKC first); ``TableRules`` holds the ``Policy`` methods that judge a table by its name and
columns (journals, message histories, full-text indexes, shadow tables) and pick the tables the
``max_tables`` cap keeps.
"""
from __future__ import annotations

import re
import unicodedata
from typing import Iterable, Mapping, Sequence


def _script(ch: str) -> str:
    """The script class of a letter, for splitting names at script changes (``name_tokens``)."""
    code = ord(ch)
    if code < 0x250:
        return "latin"
    if 0x400 <= code <= 0x52F:
        return "cyrillic"
    if 0x30A0 <= code <= 0x30FF or 0x31F0 <= code <= 0x31FF:
        return "katakana"
    if 0x3040 <= code <= 0x309F or 0x3400 <= code <= 0x4DBF or 0x4E00 <= code <= 0x9FFF or code in (0x3005, 0x3006):
        return "kanji"  # kanji with their okurigana (hiragana)
    return "other"


def name_tokens(name: str) -> tuple[str, ...]:
    """Case-folded word tokens of an identifier: ``chatMessages`` -> (chat, messages).

    The name is NFKC-normalised first (full-width ``ＡＰＩキー`` reads ``APIキー``, half-width
    katakana as full-width) and case-folded. A run of digits after letters is a token of its own:
    ``messages2`` -> (messages, 2), ``chat_messages_v2`` -> (chat, messages, v, 2). A change of
    script is a boundary too, since Japanese names have no separators: ``チャンネルID`` ->
    (チャンネル, id), ``メッセージ履歴`` -> (メッセージ, 履歴), ``сообщенияV2`` -> (сообщения, v, 2).
    """
    text = unicodedata.normalize("NFKC", name)
    spaced = re.sub(r"([A-ZА-ЯЁ]+)([A-ZА-ЯЁ][a-zа-яё])", r"\1_\2", text)
    spaced = re.sub(r"([a-zа-яё0-9])([A-ZА-ЯЁ])", r"\1_\2", spaced)
    spaced = re.sub(r"([^\W\d_])(\d)", r"\1_\2", spaced)
    out: list[str] = []
    prev = ""
    for ch in spaced:
        if ch.isalpha():
            script = _script(ch)
            if prev and prev != script and not (ch == "ー" and prev == "kanji"):
                out.append("_")
            prev = script
        elif not ch.isdigit():
            prev = ""
        out.append(ch)
    return tuple(t for t in re.split(r"[\W_]+", "".join(out).casefold()) if t)


class TableRules:
    """The rules of ``Policy`` for SQLite tables (H2): journal and message-history tables by name
    parts and columns, full-text indexes and shadow tables, and the ``max_tables`` cap. A base of
    ``Policy``; its methods read the policy's fields (``journal_words``, ``table_modifiers``, ...)."""

    # The fields of ``Policy`` these methods read (declared for the type checker; ``Policy`` sets them).
    journal_words: frozenset[str]
    journal_heads: frozenset[str]
    journal_suffixes: tuple[str, ...]
    table_modifiers: frozenset[str]
    table_prepositions: frozenset[str]
    ru_journal_forms: frozenset[str]
    ru_journal_nominatives: frozenset[str]
    ru_modifiers: frozenset[str]
    ru_adjective_endings: tuple[str, ...]
    ja_journal_suffixes: tuple[str, ...]
    ja_suffix_exceptions: tuple[str, ...]
    ja_modifiers: tuple[str, ...]
    message_columns: tuple[frozenset[str], frozenset[str], frozenset[str]]
    shadow_suffixes: tuple[str, ...]
    fts_words: frozenset[str]
    max_tables: int

    def _heads(self, tokens: Sequence[str]) -> list[str]:
        """The head of a name, and of each part before a preposition, modifiers dropped."""
        parts: list[list[str]] = [[]]
        for t in tokens:
            if t in self.table_prepositions:
                parts.append([])
            else:
                parts[-1].append(t)
        heads = []
        for part in parts:
            core = list(part)
            while core and (core[-1] in self.table_modifiers or core[-1].isdigit()):
                core.pop()
            if core:
                heads.append(core[-1])
        return heads

    def journal_table(self, name: str) -> bool:
        """True when a table's name says it is a journal or a message history (H2), by its parts.

        ``messages``, ``messages_archive``, ``chat_messages_v2``, ``history_old``, ``messages2``,
        ``msg_archive``, ``slack_export``, ``dm``, ``chats``, ``inbox``, ``threads`` are;
        ``message_templates``, ``event_plans``, ``backlog``, ``logistics`` are not. Russian and
        Japanese names too (``_journal_ru``, ``_journal_ja``): ``сообщения``, ``архив_сообщений``,
        ``история_заказов``, ``журнал``, ``メッセージ``, ``チャット履歴``, ``監査ログ`` are;
        ``шаблоны_сообщений``, ``メッセージテンプレート``, ``カタログ``, ``ログイン設定`` are not.
        """
        tokens = name_tokens(name)
        if any(t in self.journal_words for t in tokens):
            return True
        if any(w in t for t in tokens for w in self.journal_words if not w.isascii()):
            return True  # a Japanese journal word inside a token (監査ログ, 業務日誌)
        for head in self._heads(tokens):
            if head in self.journal_heads:
                return True
            if any(head.endswith(s) and len(head) > len(s) for s in self.journal_suffixes):
                return True
        return self._journal_ru(tokens) or self._journal_ja(tokens)

    def _journal_ru(self, tokens: Sequence[str]) -> bool:
        """Russian names put the head noun first (adjectives before it, a genitive after it):
        ``сообщения_клиентов``, ``личные_сообщения``, ``архив_сообщений`` (an archive is a modifier,
        so its complement decides) and ``история_заказов`` are journals; ``шаблоны_сообщений`` (message
        templates) is not, as ``message_templates`` is not. A message-like word at the end counts
        only in a form that cannot be a genitive (``клиент_чаты``, not ``шаблон_сообщения``)."""
        if not any(_script(t[0]) == "cyrillic" for t in tokens):
            return False
        parts: list[list[str]] = [[]]
        for t in tokens:
            if t in self.table_prepositions:
                parts.append([])
            else:
                parts[-1].append(t)
        for part in parts:
            core = [t for t in part if not t.isdigit()]
            while len(core) > 1 and (core[0] in self.ru_modifiers or core[0] in self.table_modifiers
                                     or core[0].endswith(self.ru_adjective_endings)):
                core.pop(0)
            while core and (core[-1] in self.ru_modifiers or core[-1] in self.table_modifiers):
                core.pop()
            if not core:
                continue
            if core[0] in self.ru_journal_forms or core[-1] in self.ru_journal_nominatives:
                return True
        return False

    def _ja_core(self, token: str) -> str:
        """A Japanese token with trailing modifiers (アーカイブ, バックアップ, 一覧, ...) cut off."""
        changed = True
        while changed:
            changed = False
            for m in self.ja_modifiers:
                if token.endswith(m) and len(token) > len(m):
                    token = token[: -len(m)]
                    changed = True
        return token

    def _journal_ja(self, tokens: Sequence[str]) -> bool:
        """Japanese compounds put the head last: a head token (trailing modifiers dropped) that is
        or ends with a message-like word (メッセージ, 履歴, ログ, チャット, 会話, 通知, ...) is a journal:
        ``チャット履歴``, ``アーカイブメッセージ``, ``メッセージアーカイブ``, ``送信履歴``; ``メッセージテンプレート``,
        ``イベント計画``, ``ログイン設定``, ``カタログ``, ``ブログ``, ``履歴書`` are not."""
        core = [t for t in tokens if not t.isdigit()]
        while core and (core[-1] in self.table_modifiers or core[-1] in self.ja_modifiers):
            core.pop()
        if not core or _script(core[-1][0]) not in ("katakana", "kanji"):
            return False
        head = self._ja_core(core[-1])
        stripped = True
        while stripped:  # leading modifiers too: アーカイブログ is an archived log, not a blog
            stripped = False
            for m in self.ja_modifiers:
                if head.startswith(m) and len(head) > len(m):
                    head, stripped = head[len(m):], True
        if head.endswith(self.ja_suffix_exceptions):
            return False
        return head.endswith(self.ja_journal_suffixes)

    def shadow_table(self, name: str, virtual: Iterable[str] = ()) -> str | None:
        """Why a table is a full-text index or a virtual table's shadow table, or None.

        Args:
            name: the table.
            virtual: names of the virtual tables of the same database.
        """
        lower = name.lower()
        for v in sorted(virtual):
            for suffix in self.shadow_suffixes:
                if lower == f"{v.lower()}_{suffix}":
                    return f"shadow table ({suffix}) of virtual table {v!r}"
        tokens = name_tokens(name)
        if any(t in self.fts_words for t in tokens) or any(
                t == "fts" or (t.startswith("fts") and t[3:].isdigit()) for t in tokens):
            return f"table name {name!r} names a full-text index"
        return None

    def message_history_columns(self, columns: Iterable[str]) -> bool:
        """True when the columns hold a channel's message history (channel + sender + text)."""
        names = {"_".join(name_tokens(c)) for c in columns}
        return all(names & group for group in self.message_columns)

    def table_skip(self, name: str, columns: Sequence[str], virtual: Iterable[str] = ()) -> tuple[str, str] | None:
        """``(rule, detail)`` when a whole table is never indexed, else None.

        ``virtual`` names the virtual tables of the same database (their shadow tables are skipped).
        """
        shadow = self.shadow_table(name, virtual)
        if shadow:
            return "shadow_table", shadow
        if self.journal_table(name):
            return "journal_table", f"table name {name!r} is journal-like"
        if self.message_history_columns(columns):
            return "message_history_table", f"columns {list(columns)} hold a message history"
        return None

    def select_tables(self, modified: Mapping[str, str | None]) -> tuple[list[str], list[str]]:
        """Split tables into (kept, dropped): the ``max_tables`` with the newest ``updated_at``.

        ``modified`` maps a table to its newest ``updated_at`` (None when unknown; such tables
        rank last). Ties break by name, so the choice is deterministic.
        """
        known = sorted(t for t, m in modified.items() if m is not None)
        known.sort(key=lambda t: str(modified[t]), reverse=True)  # stable: ties stay by name
        unknown = sorted(t for t, m in modified.items() if m is None)
        ordered = known + unknown
        return ordered[: self.max_tables], ordered[self.max_tables:]
