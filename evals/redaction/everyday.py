"""Everyday shapes of secrets (issue 39 item 4): the splits ``everyday39`` (dev) and ``everyday39h`` (held out).

An audit of issue 39 found 8 of 72 new everyday phrasings surviving on every path (``my pass: X``,
``login admin / pass X``, ``passphrase for the gpg key: …``, ``пароль к wifi X``, ``пин-код карты
7351``, recovery and backup codes, ``the code for the office safe is 4417-9920``, a ``.pgpass`` line)
and 2 of 45 ordinary lines wrongly redacted (a 40-hex commit SHA and a sha256 checksum in prose).
The audit's own lines are not here; these are new lines of the same kinds, in ru/ja/en, written in one
sitting before any rule was changed for issue 39:

* ``everyday39`` (**dev**): the rules of issue 39 were written and tuned on it;
* ``everyday39h`` (**held out**): other phrasings of the same kinds (and some kinds the dev split
  lacks: seed phrases, bike-lock and gate codes, MFA codes with letters); never used to write or tune
  the rules, run once when they were done (``README.md`` gives both figures).

Each split has planted lines (``(text, secrets, lang)``: every secret must be gone; a pass phrase
lists each of its words), ordinary lines (nothing may change: commit SHAs and checksums in prose,
codes and PINs in their ordinary senses) and echo pairs (``(first, then, secret, lang)``: a value
redacted in one record of a workspace and written alone in another, ``Записал: X``; measured with
the workspace-wide pass, ``searchkit.ingest.redact.known``).

Plain data; ``corpus.py`` loads this file by path. All text is synthetic: no real secret, address or
person. MIT, like the project.
"""
from __future__ import annotations

Planted = tuple[str, tuple[str, ...], str]
Echo = tuple[str, str, str, str]

# ---------------------------------------------------------------------------------------------
# everyday39: dev (the rules were written and tuned on it)
# ---------------------------------------------------------------------------------------------

DEV_PLANTED: tuple[Planted, ...] = (
    # en
    ("my pass: sunflower", ("sunflower",), "en"),
    ("my pw is Tangerine", ("Tangerine",), "en"),
    ("login admin / pass Quokka-55", ("Quokka-55",), "en"),
    ("user: deploy pass: marmalade", ("marmalade",), "en"),
    ("passphrase for the gpg key: lunar tide marble", ("lunar", "tide", "marble"), "en"),
    ("PIN for the company card is 7351", ("7351",), "en"),
    ("recovery codes: 4417-9920 8812-3301 5521-0098", ("4417-9920", "8812-3301", "5521-0098"), "en"),
    ("backup code for my GitHub 2FA: 55120934", ("55120934",), "en"),
    ("the code for the office safe is 4417-9921", ("4417-9921",), "en"),
    ("the locker combination is 12-34-56", ("12-34-56",), "en"),
    ("db.internal:5432:sales:anna:Vx7pQ2mL", ("Vx7pQ2mL",), "en"),
    ("machine api.example.com login bob password plum-tree", ("plum-tree",), "en"),
    ("use 8fKq2ZpL9mVx4RtW7nB3cY6d for the webhook", ("8fKq2ZpL9mVx4RtW7nB3cY6d",), "en"),
    ("here: Zq8mN4pR7tK2wX9vL5cH", ("Zq8mN4pR7tK2wX9vL5cH",), "en"),
    ("guest wifi key is harbor-lights-9", ("harbor-lights-9",), "en"),
    ("Your verification code is 381204", ("381204",), "en"),
    # ru
    ("пароль к wifi Светлячок", ("Светлячок",), "ru"),
    ("пин-код карты 7352", ("7352",), "ru"),
    ("мой пасс: ромашка", ("ромашка",), "ru"),
    ("логин admin / пасс Kolobok-12", ("Kolobok-12",), "ru"),
    ("кодовая фраза для ключа gpg: синий ветер над рекой", ("синий", "ветер", "рекой"), "ru"),
    ("резервные коды: 4417-9922 8812-3302", ("4417-9922", "8812-3302"), "ru"),
    ("код от сейфа в офисе — 4418", ("4418",), "ru"),
    ("шифр замка на шкафчике 2580", ("2580",), "ru"),
    ("ключ: Xp9vQ2LmR7tK4wZ8nB5c", ("Xp9vQ2LmR7tK4wZ8nB5c",), "ru"),
    ("вот строка для .pgpass: db.local:5432:crm:ivan:Berezka77", ("Berezka77",), "ru"),
    ("код подтверждения из смс 503917", ("503917",), "ru"),
    ("логин: petrov, пароль Рябина", ("Рябина",), "ru"),
    ("пароль от почты у меня Ландыш1990", ("Ландыш1990",), "ru"),
    ("PIN карты — 1604", ("1604",), "ru"),
    ("резервный код для входа: 7730-1185", ("7730-1185",), "ru"),
    ("скинь в чат: Kd8Wq3Zm7Lp2Xv9Rt4Ns", ("Kd8Wq3Zm7Lp2Xv9Rt4Ns",), "ru"),
    # ja
    ("金庫の暗証番号は 4419 です", ("4419",), "ja"),
    ("カードの暗証番号：7353", ("7353",), "ja"),
    ("リカバリーコード：4417-9923 8812-3303", ("4417-9923", "8812-3303"), "ja"),
    ("バックアップコードは 55120935", ("55120935",), "ja"),
    ("GPG鍵のパスフレーズは「青い海と風」です", ("青い海と風",), "ja"),
    ("ログイン admin / パス Kitsune-88", ("Kitsune-88",), "ja"),
    ("Wi-Fiのパスは ひまわり22", ("ひまわり22",), "ja"),
    ("ロッカーの暗証番号は 2581", ("2581",), "ja"),
    ("認証コード 381205 を入力してください", ("381205",), "ja"),
    ("pgpass：db.local:5432:app:tanaka:Sakura_77", ("Sakura_77",), "ja"),
    ("このキーを使って: Hm3Kx9Qp2Lz7Rv4Tw8N", ("Hm3Kx9Qp2Lz7Rv4Tw8N",), "ja"),
    ("自分のパス：つばき", ("つばき",), "ja"),
    ("オフィスの金庫の番号は 4420-9924 です", ("4420-9924",), "ja"),
    ("ユーザー名 sato パスワード ゆきだるま", ("ゆきだるま",), "ja"),
    ("ワンタイムパスワード：662014", ("662014",), "ja"),
    ("接続用のキー Vb6Nq1Xz8Km3Lp5Rw2Ty", ("Vb6Nq1Xz8Km3Lp5Rw2Ty",), "ja"),
)

DEV_ORDINARY: tuple[str, ...] = (
    # en
    "fixed in commit 3f2a9c1d4b5e6f708192a3b4c5d6e7f801234567",
    "sha256 checksum of the release: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "my pass expired yesterday",
    "the code for the parser is in src/parse.py",
    "recovery codes were regenerated for everyone",
    "PIN pad is broken at the front desk",
    "backup code review scheduled for Friday",
    "error code 4417 again on the staging box",
    "host db.internal:5432 is up",
    "cherry-picked a1b2c3d into release",
    "login admin / pass via SSO",
    "the safe is in room 204",
    # ru
    "коммит 9c4e1f2a7b3d5e6f8091a2b3c4d5e6f708192a3b исправил сборку",
    "контрольная сумма sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "пин-код карты никому не сообщайте",
    "код ошибки 4417 снова на стенде",
    "резервные коды выдаёт служба поддержки",
    "пароль к wifi висит на стене",
    "код от сейфа знает только бухгалтер",
    "кодовая фраза должна быть из четырёх слов",
    "сервер слушает db.local:5432",
    "ключ к успеху — регулярные релизы",
    "пасс от Петрова и гол",
    # ja
    "コミット 5d41402abc4b2a76b9719d911017c592aabbccdd で修正済み",
    "SHA-256 チェックサム：2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae",
    "暗証番号は4桁です",
    "エラーコード 4417 が再発",
    "リカバリーコードの再発行は管理者へ",
    "金庫の鍵は総務にあります",
    "パスの設定は PATH 環境変数で",
    "バックアップコードは安全な場所に保管してください",
    "ワンタイムパスワードはSMSで届きます",
    "ポート 5432 で待ち受けています",
)

DEV_ECHO: tuple[Echo, ...] = (
    ("Кодовое слово проекта — Незабудка", "Записал: Незабудка", "Незабудка", "ru"),
    ("the wifi password is Coffee_Time_8", "remember: Coffee_Time_8 works on both floors", "Coffee_Time_8", "en"),
    ("パスワードは つばめ です", "つばめ で入れました", "つばめ", "ja"),
    ("пароль: Жираф2025", "да, Жираф2025 подошёл", "Жираф2025", "ru"),
    ("token: Maple_Leaf_3", "Maple_Leaf_3 expires next week", "Maple_Leaf_3", "en"),
    ("合言葉：やまびこ", "やまびこ、了解です", "やまびこ", "ja"),
)

# ---------------------------------------------------------------------------------------------
# everyday39h: held out (never used to write or tune the rules; run once)
# ---------------------------------------------------------------------------------------------

HELDOUT_PLANTED: tuple[Planted, ...] = (
    # en
    ("pass is pumpkin42 fyi", ("pumpkin42",), "en"),
    ("u: root p: Lighthouse", ("Lighthouse",), "en"),
    ("account ops / pw kiwi-tree-3", ("kiwi-tree-3",), "en"),
    ("seed phrase for the wallet: apple river stone cloud", ("apple", "river", "stone", "cloud"), "en"),
    ("the alarm PIN at the warehouse is 0284", ("0284",), "en"),
    ("2FA backup codes — 7731-0042, 9910-5531", ("7731-0042", "9910-5531"), "en"),
    ("safe combo: 36-12-48", ("36-12-48",), "en"),
    ("gate code for the parking lot: 4490#", ("4490",), "en"),
    ("~/.pgpass: localhost:5432:*:postgres:Otter_2026", ("Otter_2026",), "en"),
    (".netrc → machine git.example.org login ci password Bramble7", ("Bramble7",), "en"),
    ("paste this into the form: Lq7Vz2Kx9Pm4Rw8Tn3Hc", ("Lq7Vz2Kx9Pm4Rw8Tn3Hc",), "en"),
    ("the MFA recovery code is 8Q3K-ZP2M-7VXA", ("8Q3K-ZP2M-7VXA",), "en"),
    ("bike lock code is 5913", ("5913",), "en"),
    ("router admin pwd → Pelican", ("Pelican",), "en"),
    ("the one-time passcode was 447120", ("447120",), "en"),
    ("our shared drive password, in case you need it: Gooseberry", ("Gooseberry",), "en"),
    # ru
    ("мой пасс от вайфая — Одуванчик", ("Одуванчик",), "ru"),
    ("логин root, пасс Barsik-2024", ("Barsik-2024",), "ru"),
    ("ПИН от банковской карты: 0285", ("0285",), "ru"),
    ("коды восстановления: 7731-0043 9910-5532", ("7731-0043", "9910-5532"), "ru"),
    ("код к сейфу 36-12-49", ("36-12-49",), "ru"),
    ("код от калитки 4491", ("4491",), "ru"),
    ("сид-фраза кошелька: яблоко река камень облако", ("яблоко", "река", "камень", "облако"), "ru"),
    ("строка из .pgpass — localhost:5432:*:postgres:Vydra_2026", ("Vydra_2026",), "ru"),
    ("скопируй это в поле: Rt5Yw8Kp3Xm9Lz2Qv7Nb", ("Rt5Yw8Kp3Xm9Lz2Qv7Nb",), "ru"),
    ("разовый код: 667120", ("667120",), "ru"),
    ("пароль к роутеру Пеликан", ("Пеликан",), "ru"),
    ("доступ к NAS: nas_admin / Филин", ("Филин",), "ru"),
    ("код домофона в подъезде 1379", ("1379",), "ru"),
    ("пароль на архив с договорами — Снегирь", ("Снегирь",), "ru"),
    ("запасные коды для 2FA: 5518-2200, 6604-7719", ("5518-2200", "6604-7719"), "ru"),
    ("пин от телефона 2468", ("2468",), "ru"),
    # ja
    ("ルーターのパス：かもめ77", ("かもめ77",), "ja"),
    ("ユーザー root　パス Tanuki-9", ("Tanuki-9",), "ja"),
    ("口座の暗証番号 0286", ("0286",), "ja"),
    ("二段階認証のバックアップコード：7731-0044、9910-5533", ("7731-0044", "9910-5533"), "ja"),
    ("金庫のダイヤル番号は 36-12-50", ("36-12-50",), "ja"),
    ("門の暗証番号：4492", ("4492",), "ja"),
    ("ウォレットのシードフレーズ：りんご かわ いし くも", ("りんご", "かわ", "いし", "くも"), "ja"),
    (".pgpass の行：localhost:5432:*:postgres:Kawauso_2026", ("Kawauso_2026",), "ja"),
    ("このキーを貼ってください Pz4Wc9Lk2Vx7Qm3Rt8Hn", ("Pz4Wc9Lk2Vx7Qm3Rt8Hn",), "ja"),
    ("ワンタイムコードは 667121 です", ("667121",), "ja"),
    ("共有フォルダのパスワード → すずらん", ("すずらん",), "ja"),
    ("NAS：nas_admin / フクロウ", ("フクロウ",), "ja"),
    ("スマホのPINは 1357", ("1357",), "ja"),
    ("圧縮ファイルのパスワードはコスモス", ("コスモス",), "ja"),
    ("予備のコード：5518-2201 6604-7720", ("5518-2201", "6604-7720"), "ja"),
    ("確認コード 992011", ("992011",), "ja"),
)

HELDOUT_ORDINARY: tuple[str, ...] = (
    # en
    "merged 1f0e3dad99908345f7439f8ffabdffc4ad2b7c1e into main",
    "sha256sum: 4a44dc15364204a80fe80e9039455cc1608281820fe2b24f1e5233ade6af1dd5  release.tar.gz",
    "the alarm PIN must be changed quarterly",
    "backup codes: generate new ones in settings",
    "safe combo is with the office manager",
    "commit 7b2e9a1 fixed the flaky test",
    "response code 4490 from the gateway",
    "postgres listens on localhost:5432",
    "md5 of the file is 098f6bcd4621d373cade4e832627b4f6",
    "pass the token to the constructor",
    "gate code changes every month",
    # ru
    "слил ветку, коммит 2aae6c35c94fcfb415dbe95f408b9ce91ee846ed",
    "SHA-256 архива: 6b86b273ff34fce19d6b804eff5a3f0747ada4eaa22f1d49c01e52ddb7875b4b",
    "ПИН от карты меняется в приложении банка",
    "коды восстановления сгенерируйте заново",
    "код к сейфу у завхоза",
    "ошибка с кодом 667120 в логах",
    "сид-фраза — это 12 или 24 слова",
    "порт 5432 открыт на localhost",
    "хеш md5: 5d41402abc4b2a76b9719d911017c592",
    "пасс в футболе был точным",
    "код домофона поменяли в пятницу",
    # ja
    "コミット 356a192b7913b04c54574d18c28d46e6395428ab をマージ",
    "ダウンロードしたファイルのSHA256は d4735e3a265e16eee03f59718b9b5d03019c07d8b6c51f90da3a666eec13ab35 です",
    "暗証番号は窓口で変更できます",
    "バックアップコードを再生成してください",
    "金庫のダイヤルは総務が管理",
    "ステータスコード 4490 が返る",
    "シードフレーズは12語です",
    "localhost:5432 で待ち受け",
    "MD5 ハッシュ：c4ca4238a0b923820dcc509a6f75849b",
    "パスが通っていないので which で確認",
    "確認コードはメールで届きます",
)

HELDOUT_ECHO: tuple[Echo, ...] = (
    ("пароль: Ромашка_55", "Ромашка_55 подошёл, спасибо", "Ромашка_55", "ru"),
    ("api key: Violet-Rain-7", "tried Violet-Rain-7 and it worked", "Violet-Rain-7", "en"),
    ("合言葉：かもめ丸", "かもめ丸、了解です", "かもめ丸", "ja"),
    ("код от сейфа — 8817", "8817 не подходит, проверь", "8817", "ru"),
    ("the gate code is 5530", "5530 worked", "5530", "en"),
    ("暗証番号は 9021 です", "9021 で開きました", "9021", "ja"),
)

SPLITS = {
    "everyday39": (DEV_PLANTED, DEV_ORDINARY, DEV_ECHO),
    "everyday39h": (HELDOUT_PLANTED, HELDOUT_ORDINARY, HELDOUT_ECHO),
}
"""Split name -> (planted, ordinary, echo pairs)."""
