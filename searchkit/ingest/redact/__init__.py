"""Redaction of secrets and e-mail addresses in text that goes into an index (SPEC T2).

Each rule is a named entry of ``RULES``; ``redact`` applies them in order. A redacted span
becomes ``[redacted]`` (``[email]`` for an address); where a key word introduces the secret
the key word stays and only the value is replaced, so ``password=hunter2`` reads
``password=[redacted]`` and ``パスワードは hunter2xyz です`` reads ``パスワードは [redacted] です``.

What is found:

* token shapes a secret scanner knows (the detect-secrets plugins were the reference): private
  key blocks, credentials in URLs, ``Authorization`` headers, vendor tokens (AWS, GitHub, GitLab,
  Slack, Stripe, Twilio, SendGrid, Mailchimp, npm, PyPI, Square, Telegram, Discord, Hugging Face,
  OpenAI/Anthropic, Google), JWTs, ``curl -u user:pass`` / ``mysql -ppass`` on a command line,
  and long random-looking hex/base64 strings;
* e-mail addresses, internationalised ones too (``ivan@пример.рф``, ``用户@例子.广告``);
* secrets introduced by a key word in English, Russian or Japanese (password, passcode, PIN,
  token, API key, secret, пароль/пароля/паролем…, токен…, ключ…, ключ API, API-ключ,
  パスワード, 暗証番号, トークン, APIキー, シークレット, …), after ``:``/``=``/``：``, a word
  (``is``, ``это``, ``は…です``, ``—``, ``to``, ``на``) or a space, also with a short qualifier
  between (``the password for the staging db is …``, ``пароль от почты: …``), and the reverse
  forms (``use X as the password``, ``X をパスワードに設定``, ``X がパスワードです``);
* the forms an audit found (issues 7-8): a bracket quote right after the key word
  (``サーバーのパスワード「…」です``, ``パスワードの「…」``), the value alone on the next line
  (``パスワード\n…``), the possessive (``password's …``), short key words (``PW: …``, ``pw=…``,
  ``my pass is …``; only after a separator and only a value shaped like a secret, so ``PW-2 is the
  second phase`` and ``my pass expired`` stay) and pass phrases of plain words (``passphrase:
  correct horse battery staple``, ``кодовая фраза: …``, ``パスフレーズ：…``);
* the shapes of issue 27: values people choose (``password: Summer-2026``, ``token: TOKENJA_99``,
  ``ключ API: КЛЮЧ_API_88``, ``パスワードは もみじ_57 です``), environment and configuration lines
  (``export DB_PASS=…``, ``PGPASSWORD=…``, ``awsSecretAccessKey: …``, ``<password>…</password>``),
  the value on the next line or in a YAML block (``PASSWORD =\n value``, ``password: |\n  value``)
  and key words glossed in another script (``password (пароль): …``, ``token для CI — …``);
* plain words and names as values (issue 27 item 2, follow-up; privacy first: any doubt redacts):
  after an explicit separator (``:``, ``=``, ``：``, ``→``) any value but a status or placeholder
  word or a word of a sentence (``пароль: Солнышко``, ``パスワード：さくら``, ``password: hunter-2``;
  ``password: see vault``, ``пароль: см. хранилище`` stay); after ``is``/``это``/``—``/``は…です``
  one value alone in its clause, or a capitalised one (``the password is Sunshine``, ``パスワードは
  さくら です``; ``the password is required``, ``パスワードは必須です`` stay) — ``_bare_value``;
* more key words (``deploy key``, ``ssh key``, ``access code``, ``secret phrase``, ``код доступа``,
  ``пин-код``, ``合言葉``, ``認証コード``, …), compound names (``db_pass``, ``adminPwd``, ``пароль_бд``,
  ``管理者PW``: ``_compound_edits``) and the password of a login/password pair after ``creds``,
  ``credentials``, ``логин/пароль``, ``учётные данные``, ``ID/PW``, ``ログイン情報``
  (``creds: admin / Summer-2026``: ``_creds_edits``);
* secrets in file names (``redact_file_name``: ``password=attsecret55.txt``);
* the everyday shapes of issue 39 (``everyday``): ``my pass: …``, ``login admin / pass …``, ``passphrase
  for the gpg key: …``, ``пароль к wifi …``, ``пин-код карты 7351``, lists of recovery and backup codes,
  ``the code for the office safe is …``, seed phrases, ``.pgpass`` and ``.netrc`` lines;
* key-shaped values with no key word, by detect-secrets (``detector``: its token plugins and entropy
  measures; a commit SHA or a checksum that its words name stays).

Each rule notes the values it replaces (``known.found_values``, in memory only): a workspace load and a
task import redact them wherever they appear again in their scope, keeping salted digests only
(``known.KnownSecrets``; issue 39 item 4).

A value after a key word is replaced only when it looks like a secret or is a plain value as
above: after a bare space only a value with letters and digits, symbols, or (for a password or
PIN) four or more digits. Versions, dates, task ids, numbers with units, file names, URLs and
model names (``gpt-4o``) are never values. Full-width forms
(``ＡＰＩキー：``) read as their ASCII counterparts. Deterministic; regular expressions (and
detect-secrets' plugins, which are regular expressions too), linear in the text.

``evals/redaction/corpus.py`` measures the rules on synthetic planted secrets and ordinary sentences.

The package, lowest first: ``words`` (words that are prose, not values), ``shapes`` (what a value
looks like), ``known`` (values known in a workspace), ``tokens`` (token shapes), ``detector``
(detect-secrets), ``keywords`` (key words, separators, qualifiers), ``values`` (the value after a key
word), ``keyword_rules`` (the rules that start from a key word), ``everyday`` (issue 39's shapes) and
``rules`` (the registry and ``redact``); the names below are its public face.
"""
from __future__ import annotations

from searchkit.ingest.redact.rules import RULES, Rule, redact, redact_counted, redact_file_name
from searchkit.ingest.redact.shapes import EMAIL, SECRET, Edit, plain_value

__all__ = ["EMAIL", "RULES", "SECRET", "Edit", "Rule", "plain_value", "redact", "redact_counted", "redact_file_name"]
