"""Real words for the guaranteed modes: a GBNF word rule drawn from a word list, for llama.cpp servers.

Under a plain length grammar a model that does not know where the count ends squeezes its next words into the
last one ("traditionaldough", "positiveMindset", "The Whaler'sRestOurM."). Drawing every word from the most
frequent English words of `wordfreq` (plus numbers and the words of the writer's own instruction) makes a
glued or invented word impossible; the last word also may not be a dangling function word ("of", "the").
Chinese draws its characters from the characters of wordfreq's Chinese list.

The word trie is about a megabyte of grammar text: it is built once per process (`functools.cache`, from a word
list kept in `data/cache/` after the first process has filtered it) and used
for llama.cpp only (embedded model, GGUF files, llama.cpp servers); remote APIs keep the plain rule. The
in-process llama.cpp reads LLGuidance's Lark, where each list is one regex terminal (`english_lexicon_lark`):
one lexer DFA checks a token far faster than llama.cpp's GBNF engine walks the trie's rules.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import threading
from collections.abc import Iterable
from functools import cache, lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from .expr import Alt, Chars, Lit, Rep, Seq, json_lit, opt, standalone
from .keep import cache_dir
from .vocab import PROJECT_ROOT

EN_WORDS = 20_000
"""How many of wordfreq's most frequent English words the grammar admits (measured: benchmarks/quality.py)."""
ZH_WORDS = 30_000
"""How many of wordfreq's most frequent Chinese words give the character list (about 3,500 characters)."""
MAX_EXTRA = 200
"""At most this many of the instruction's own words are added to a request's grammar."""

_DANGLING_WORDS = """
a an the and or but nor of to in on at by for from with into onto upon as than if because though although
unless until whose whom which such every each either neither very also my your our their its his her via
per including like between among through under during without within against toward towards i s
dr mr mrs ms mx prof
"""
DANGLING = frozenset(_DANGLING_WORDS.split())
"""Words a sentence does not end on (articles, conjunctions, prepositions, determiners, and the titles before a
name: "Dear Dr." is no sentence): the last word of a guaranteed text is never one of these, and a text ending on
one is flagged."""

# ----- units that are one word though they hold a dot, a colon or a symbol (issue 31) ------------------------------

_DIGITS = Chars("0-9")
_GROUP = Seq((Lit(","), Rep(_DIGITS, 3, 3)))  # a thousands group
_THOUSANDS = Seq((Rep(_DIGITS, 1, 3), Rep(_GROUP, 1, 2)))
_DECIMAL = Seq((Lit("."), Rep(_DIGITS, 1, 4)))
NUMBER_EXPR = Alt(
    (
        Seq((Chars("$€£"), Alt((_THOUSANDS, Rep(_DIGITS, 1, 6))), opt(_DECIMAL))),
        Seq((_THOUSANDS, opt(_DECIMAL), opt(Lit("%")))),
        Seq((Rep(_DIGITS, 1, 4), Rep(_DECIMAL, 2, 2))),
        Seq(
            (
                Rep(_DIGITS, 1, 6),
                opt(Alt((_DECIMAL, *(Rep(Seq((Lit(sep), Rep(_DIGITS, 1, 4))), 1, 2) for sep in ":/")))),
                opt(Alt(tuple(Lit(x) for x in ("%", "st", "nd", "rd", "th", "s", "am", "pm")))),
            )
        ),
    )
)
"""A number written whole, one en_words word: a time (3:30), a decimal or thousands (1.6, 3,400, 1,234.5), money
($3.4, €12, $1,250.50), a percentage (12%), an ordinal (21st), a date (11/03/2022, 12.05.2024), a version (3.11.7),
a decade (1990s), a time run together (3:30pm). Its parts keep one separator each: a thousands group has three
digits, money and thousands have one decimal part, two dot parts (a date, a version) follow at most four digits,
and no number mixes a dot with a colon or puts a comma after its dot ("1.11:15", "250,118,12", "1.11,234",
"$3.50.45", "28,201.1.22", "21111.22.22": strings a 135M model strung into lists). So a year, a price or a time may take
a comma ("In 1999, the…", "$3.50, or…", "at 3:30, then…"): it cannot read on into a number. Under a grammar a number
otherwise ends at its first dot or colon and the model is made to write "3: 30 PM", "a 12. percent reduction".

Written once, as a tree (expr.py): the grammars' `num` rule, its GBNF and its regex below are renderings of it."""
NUMBER = standalone(NUMBER_EXPR, "regex")
"""`NUMBER_EXPR` as a regular expression (Python's `re`, Rust's `regex`, LLGuidance's Lark terminals)."""
NUMBER_GBNF = standalone(NUMBER_EXPR, "gbnf")
"""`NUMBER_EXPR` in GBNF (llama.cpp's engine)."""
NUMBER_PAUSE = ",;!?"
"""What may follow a number inside a text: no stop and no colon ("3: 30", "12. percent", "November 3. 2022." were
numbers cut by the grammar); a number may still end the text with its stop."""
ABBREVIATIONS = (
    "a.m.", "p.m.", "A.M.", "P.M.", "e.g.", "i.e.", "E.g.", "I.e.", "U.S.", "U.K.", "U.N.", "E.U.", "D.C.", "Ph.D.",
    "etc.", "vs.", "approx.",
)  # fmt: skip
"""Abbreviations written whole with their dots, one en_words word each ("9 a.m.", "the U.S."); one that can close a
sentence closes it with its own dot ("…at 9 a.m.", never "a.m..")."""
ABBREVIATIONS_ENDING = ("a.m.", "p.m.", "A.M.", "P.M.", "U.S.", "U.K.", "U.N.", "E.U.", "D.C.", "Ph.D.", "etc.")
"""The abbreviations a sentence may end on."""

NUMBER_CUT = standalone(Seq((opt(Chars("$€£")), Rep(_DIGITS, 1, 3), opt(_GROUP), Lit(","))), "regex")
"""A number `NUMBER` reads on past: a comma after one to three digits or one thousands group ("250," as in
"250,000"). LLGuidance reads a unit as far as it can go on, so under the word list "We sold 250, then" is read as a
number cut short and refused; the word-and-space terminal (`_word_space`) refuses the same texts. A number may take
no dot or colon inside a text (`NUMBER_PAUSE`), so only its comma can be cut; "In 1999, the" can no longer read on
("1999,000" is no number) and is written."""

ZH_DANGLING = frozenset("的和与或在是把被对从向为及并")
"""Chinese characters a sentence does not end on (particles, conjunctions, prepositions). Not 了: it ends a great
many sentences ("书店开门了。"); it stood here, as one character, for the 为了 ("in order to") of a cut clause."""

# A word the en_words and lifebench counters both count as exactly one, whatever its case.
_PLAIN = re.compile(r"^[a-z0-9]([a-z0-9'-]{0,14}[a-z0-9])?$")
_INSTRUCTION_WORD = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9'-]{0,14}[A-Za-z0-9])?")
_HAN = re.compile(r"[\u4e00-\u9fff]")


@cache
def english_words() -> tuple[str, ...]:
    """wordfreq's most frequent English words that the counters count as one word (no dots, no symbols).

    Single letters other than "a" and "i" are dropped: they are what a cut-off word looks like ("OurM").
    Filtering out glued words takes about 2 s, so the list is kept on disk (`_saved_list`) for the next process.
    """
    saved = _saved_list()
    kept_before = _read(saved) if saved is not None else ()
    if len(kept_before) > EN_WORDS // 2:  # a file emptied or cut short by hand is built again
        return kept_before
    from wordfreq import top_n_list

    words = (w for w in top_n_list("en", EN_WORDS) if _PLAIN.match(w) and not looks_glued(w))
    kept = tuple(w for w in words if len(w) > 1 or w in ("a", "i") or w.isdigit())
    if saved is not None:
        _save(saved, "\n".join(kept) + "\n")
    return kept


def _saved_list() -> Path | None:
    """Where this list is kept: `data/cache/`, named for wordfreq's version, this module's text and the compounds
    it keeps (`COMPOUNDS_FILE`), so a new wordfreq or an edited rule builds it again. None when one cannot be
    read."""
    try:
        version = metadata.version("wordfreq")
        source = hashlib.sha256(Path(__file__).read_bytes() + COMPOUNDS_FILE.read_bytes()).hexdigest()[:12]
    except (OSError, metadata.PackageNotFoundError):
        return None
    return PROJECT_ROOT / "data" / "cache" / f"en-words-{EN_WORDS}-wordfreq{version}-{source}.txt"


def _read(path: Path) -> tuple[str, ...]:
    try:
        return tuple(path.read_text(encoding="utf-8").split())
    except (OSError, UnicodeDecodeError):
        return ()


def _save(path: Path, text: str) -> None:
    """Write whole or not at all (processes started at once each write their own copy, then swap it in); a
    read-only install just builds the list in each process."""
    write_whole(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def write_whole(path: Path, write: Any) -> bool:
    """Have `write(tmp)` fill a file beside `path`, then swap it in: whole or not at all, whatever other processes
    write at once. False where the folder cannot be written (a read-only install builds again in each process)."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write(tmp)
        os.replace(tmp, path)
        return True
    except OSError:
        with contextlib.suppress(OSError):  # nothing to remove where the folder itself could not be made
            tmp.unlink(missing_ok=True)
        return False


LONGEST_WORD = 64
"""Longer than any word wordfreq gives a frequency (its longest, in English and Chinese, has 34 letters)."""


def zipf(word: str, lang: str = "en") -> float:
    """wordfreq's Zipf frequency (0 for a word it has never seen), cached. A word longer than any wordfreq knows
    is 0 without a lookup (and is not kept in the cache)."""
    if len(word) > LONGEST_WORD:
        return 0.0
    return _zipf(word, lang)


@cache
def _zipf(word: str, lang: str) -> float:
    if lang == "en" and (known := _english_zipf(word)) is not None:
        return known
    from wordfreq import zipf_frequency

    if lang == "zh":
        quiet_jieba()
    return zipf_frequency(word, lang)


_LETTERS = re.compile(r"[A-Za-z]+")
_LETTERS_APOSTROPHE = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)+")


def _english_zipf(word: str) -> float | None:
    """wordfreq's Zipf frequency of an English word of ASCII letters (or with an inner apostrophe: "don't"), read
    from a table kept on disk (`ZipfTable`) instead of loading wordfreq's whole list (0.5-0.8 s a process, for the
    first quality check). None where the table cannot answer exactly: another word, or no table. A curly apostrophe
    reads as a straight one, as wordfreq reads it."""
    word = word.replace("’", "'")
    letters = _LETTERS.fullmatch(word) is not None
    if not letters and not _LETTERS_APOSTROPHE.fullmatch(word):
        return None
    table = english_table()
    if table is None:
        return None
    found = table.get(word.lower())
    return found if found is not None or not letters else 0.0  # ASCII letters are one token: unlisted is 0


class ZipfTable:
    """wordfreq's English frequencies as an indexed SQLite table: a lookup reads a few pages, not the list.

    It holds every listed word of ASCII letters (each one token to wordfreq, so its Zipf value is its frequency
    bucket's) and those with an inner apostrophe that wordfreq's tokenizer keeps whole ("don't"; "l'heure" is two
    tokens and stays out), with the Zipf value wordfreq gives it. Built once per wordfreq version."""

    def __init__(self, path: Path) -> None:
        import sqlite3

        self._db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        self._lock = threading.Lock()  # one connection, any thread (quality checks run in variants' threads)

    def get(self, word: str) -> float | None:
        with self._lock:
            row = self._db.execute("SELECT zipf FROM zipf WHERE word = ?", (word,)).fetchone()
        return None if row is None else float(row[0])

    @staticmethod
    def build(tmp: Path) -> None:
        """Fill a new table at `tmp` from wordfreq's English list (about 1 s, once)."""
        import sqlite3

        from wordfreq import get_frequency_list, zipf_frequency
        from wordfreq.tokens import lossy_tokenize

        rows: list[tuple[str, float]] = []
        for bucket in get_frequency_list("en"):
            plain = [w for w in bucket if _LETTERS.fullmatch(w)]
            whole = [w for w in bucket if _LETTERS_APOSTROPHE.fullmatch(w) and lossy_tokenize(w, "en") == [w]]
            if plain or whole:
                value = zipf_frequency((plain or whole)[0], "en")  # one value a bucket: wordfreq rounds each the same
                rows += [(w, value) for w in plain + whole]
        db = sqlite3.connect(tmp)
        try:
            db.execute("CREATE TABLE zipf (word TEXT PRIMARY KEY, zipf REAL) WITHOUT ROWID")
            db.executemany("INSERT OR IGNORE INTO zipf VALUES (?, ?)", rows)
            db.commit()
        finally:
            db.close()


@cache
def english_table() -> ZipfTable | None:
    """The English Zipf table, built on first use and kept in the cache folder for every later process (named for
    wordfreq's version); None where it can be neither read nor written (then wordfreq answers, as before)."""
    try:
        path = cache_dir() / f"zipf-en-wordfreq{metadata.version('wordfreq')}-{ZIPF_TABLE_FORM}.sqlite"
    except metadata.PackageNotFoundError:
        return None
    import sqlite3

    try:
        if not path.is_file() and not write_whole(path, ZipfTable.build):
            return None
        table = ZipfTable(path)
        table.get("the")  # a damaged file fails here: the next process builds it again
    except sqlite3.Error:
        path.unlink(missing_ok=True)
        return None
    return table


ZIPF_TABLE_FORM = 1
"""The table's layout: a new one is built where this changes."""


@cache
def quiet_jieba() -> None:
    """Tell jieba (wordfreq's Chinese tokenizer, and the `zh_words` counter) to keep its "Building prefix dict…"
    lines to itself: they landed in the middle of a streamed Chinese text on the terminal. (Imported only for
    Chinese: it takes 0.9 s.)"""
    import logging

    import jieba

    jieba.setLogLevel(logging.WARNING)


GLUED_PART = 24
"""The longest half `looks_glued` tries: longer than any common English word ("telecommunications" is 18), so a
model's one-word answer of a million letters costs a few lookups, not a million."""


COMPOUNDS_FILE = PROJECT_ROOT / "capel_ui" / "data" / "scowl" / "compounds.txt"
"""Words that look like two run together and are words ("soup", "noon", "teamwork"): scripts/compounds.py."""


@cache
def _compounds() -> frozenset[str]:
    """The words of `COMPOUNDS_FILE` (a spelling dictionary's, SCOWL: its licence is beside it)."""
    return frozenset(COMPOUNDS_FILE.read_text(encoding="utf-8").split())


def looks_glued(word: str, compounds: bool = True) -> bool:
    """camelCase ("positiveMindset"), or two common words run together that are far rarer joined ("ofthe",
    "traditionaldough"): web text puts a few such typos even in wordfreq's frequent words. Not a word a spelling
    dictionary lists (`compounds()`): by frequency alone "soup" (so + up), "onto" and "teamwork" look glued, and the
    word list left them out."""
    if re.search(r"[a-z][A-Z]", word):
        return True
    low = word.lower()
    splits = range(max(2, len(low) - GLUED_PART), min(len(low) - 1, GLUED_PART + 1))
    if not splits or not low.isalpha() or (compounds and low in _compounds()):
        return False  # no split leaves two common-word-sized halves: a bounded cost, however long the word
    own = zipf(low)
    for i in splits:
        left, right = zipf(low[:i]), zipf(low[i:])
        if left >= 3.0 and right >= 3.0 and own < min(left, right) - 2.0:
            return True
    return False


@cache
def chinese_chars() -> str:
    """The Han characters (base block) of wordfreq's most frequent Chinese words, in frequency order."""
    from wordfreq import top_n_list

    seen: dict[str, None] = {}
    for word in top_n_list("zh", ZH_WORDS):
        for ch in _HAN.findall(word):
            seen.setdefault(ch, None)
    return "".join(seen)


# ----- the trie as GBNF --------------------------------------------------------------------------------------


def _trie(words: Iterable[str]) -> dict[str, dict]:
    """A character trie; the key "" marks the end of a word."""
    root: dict[str, dict] = {}
    for word in words:
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}
    return root


def _emit(node: dict[str, dict]) -> str:
    """GBNF for everything below `node` (single-child chains merged into one literal); optional if it may end."""
    ends = "" in node
    alts = []
    for ch in sorted(k for k in node if k):
        edge, child = ch, node[ch]
        while len(child) == 1 and "" not in child:  # a chain: one literal
            (nxt,) = child
            edge, child = edge + nxt, child[nxt]
        alts.append(json_lit(edge) + (" " + _emit(child) if any(child) else ""))
    if not alts:
        return ""
    body = alts[0] if len(alts) == 1 and not ends else "(" + " | ".join(alts) + ")"
    return body + ("?" if ends else "")


def _rooted(words: Iterable[str]) -> str:
    """The trie, its first letter in either case (so "london" admits "London", never "lonDon")."""
    root = _trie(words)
    alts = []
    for ch in sorted(root):
        head = f"[{ch}{ch.upper()}]" if ch.isalpha() else json_lit(ch)
        rest = _emit(root[ch])
        alts.append(f"{head} {rest}".strip())
    return " | ".join(alts)


@cache
def english_tries() -> tuple[str, str]:
    """(any word, a word that can end a sentence): built once per process, about a second."""
    words = _lettered()
    return _rooted(words), _rooted(w for w in words if w not in DANGLING)


def _lettered() -> tuple[str, ...]:
    """The listed words that start with a letter: a number is the grammar's `num` rule (NUMBER), written whole; as a
    listed word "3" could end at "3:" and leave "30" to the next word."""
    return tuple(w for w in english_words() if not w[0].isdigit())


@cache
def _listed() -> frozenset[str]:
    return frozenset(english_words())


@lru_cache(maxsize=64)  # one entry per instruction: a long-running app sees many
def _own_words(text: str) -> frozenset[str]:
    return frozenset(w.lower() for w in instruction_words(text, _listed()))


@cache
def _listed_chars() -> frozenset[str]:
    return frozenset(chinese_chars())


def known_unit(unit: str, lang: str, own_text: str = "") -> bool:
    """Whether the guaranteed grammars' word list admits `unit` as one word (English: a listed word in either case of
    its first letter, with 's, or two joined by a hyphen, a number, or one of `own_text`'s words) or as one Chinese
    character: what the ending search may write (ending.search_ending)."""
    if lang == "zh":
        return unit in _listed_chars()
    word = unit.replace("’", "'")
    if word.isdigit():
        return len(word) <= 6
    if re.fullmatch(NUMBER, word) or word in ABBREVIATIONS:
        return True
    word = word[:-2] if word.lower().endswith("'s") else word
    parts = word.split("-")
    own = _own_words(own_text) if own_text else frozenset()
    return len(parts) <= 2 and all(p.lower() in _listed() or p.lower() in own for p in parts)


def begins_known_unit(unit: str, lang: str, own_text: str = "") -> bool:
    """Whether `unit` is, or may still grow into, a unit `known_unit` admits ("relax" of "relaxing", "far-" of
    "far-reaching", "whaler'" of "Whaler's"): the ending search asks nothing about a word that cannot. Numbers and
    Chinese characters always may."""
    word = unit.replace("’", "'").lower()
    if lang == "zh" or not word or any(ch.isdigit() for ch in word) or known_unit(unit, lang, own_text):
        return True
    own = _own_words(own_text) if own_text else frozenset()
    if any(w.startswith(word) for w in own):
        return True
    base, apostrophe, rest = word.partition("'")
    if apostrophe:  # a possessive on its way: "whaler'" or "whaler's"
        return "s".startswith(rest) and known_unit(base, lang, own_text)
    parts = word.split("-")
    if len(parts) > 2:
        return False
    if len(parts) == 2 and not (parts[0] in _listed() or parts[0] in own):
        return False
    return not parts[-1] or parts[-1] in _listed_starts() or any(w.startswith(parts[-1]) for w in own)


@cache
def _listed_starts() -> frozenset[str]:
    """Every start of a listed word ("r", "re", "rel", … "relaxing"), built once a process (about 0.05 s)."""
    return frozenset(w[:i] for w in english_words() for i in range(1, len(w) + 1))


def instruction_words(text: str, known: Iterable[str] = ()) -> list[str]:
    """The writer's own words the list lacks (names, brands, "CAPEL"), as written, first seen first."""
    have = set(known) or set(english_words())
    out: dict[str, None] = {}
    for m in _INSTRUCTION_WORD.finditer(text):
        word = re.sub(r"'s$", "", m.group())  # "Whaler's" gives "Whaler"; the grammar adds 's itself
        if word.lower() not in have and not word.isdigit():
            out.setdefault(word, None)
    return list(out)[:MAX_EXTRA]


def english_lexicon_rules(extra_words: Iterable[str] = (), whole: bool = True, numbers: bool = True) -> str:
    """The English `word`/`wend` rules of the guaranteed grammars, drawn from the word list (llama.cpp only).

    `word` is a listed word (optionally 's, or two joined by a hyphen), a number or one of `extra_words`,
    then optional punctuation; `wend` is a listed word that can end a sentence, then . ! or ?.
    """
    return _english_rules(extra_words, lark=False, whole=whole, numbers=numbers)


def english_lexicon_lark(extra_words: Iterable[str] = (), whole: bool = True, numbers: bool = True) -> str:
    """`english_lexicon_rules` as Lark for LLGuidance: the same words, the same shape; `word` and `wend` rules of
    a word terminal and a punctuation terminal (grammar.WORD_LIST_END says why), and `WORD_SPACE`, a word that is
    not the last with its punctuation and the space after it as one terminal (`_word_space`)."""
    return _english_rules(extra_words, lark=True, whole=whole, numbers=numbers)


def _english_rules(extra_words: Iterable[str], *, lark: bool, whole: bool = True, numbers: bool = True) -> str:
    """The English word rules in GBNF (`name ::= body`, the lists as tries of rules) or in LLGuidance's Lark
    (`NAME: body`, terminals, the lists as regexes); with no number (`numbers=False`) for the rest of a text that
    turned into a list of them (generation.py)."""
    lex, end = english_regexes() if lark else english_tries()
    extras = [w for w in dict.fromkeys(extra_words) if _INSTRUCTION_WORD.fullmatch(w)]
    if not numbers:
        extras = [w for w in extras if not re.search(r"\d", w)]

    def n(name: str) -> str:
        return name.upper() if lark and name not in ("word", "wend") else name  # Lark: rules (WORD_LIST_END)

    def cls(chars: str) -> str:
        return f"/[{chars}]/" if lark else f"[{chars}]"

    extra_alt = f" | {n('extra')}" if extras else ""
    stop = n("stop") if lark else cls(".!?")
    number, number_end = (f" | {n('num')} {cls(NUMBER_PAUSE if whole else ',;:.!?')}?", f" | {n('numend')}")
    rules = {
        "word": f"{n('wcore')} {cls(',;:.!?')}?" + (number if numbers else ""),
        "wend": f"{n('ecore')} {stop}" + (number_end if numbers else ""),
        "wcore": f'({n("lex")}{extra_alt}) ("\'s")? ("-" {n("lex")})?',
        "ecore": f"{n('elex')}{extra_alt}",
    }
    if numbers:  # a number's own stop is in its terminal (`numend`): LLGuidance's lexer is greedy, and "1999." lexed
        # as a number that might go on ("1999.5") would never end as one word and a stop
        rules["num"] = (
            ("/" + NUMBER.replace("/", "\\/") + "/" if lark else NUMBER_GBNF) if whole else cls("0-9") + "{1,6}"
        )
        rules["numend"] = f"{n('num')} {cls('.!?')}"
    rules |= {"lex": lex, "elex": end}
    if whole:  # LIFEBench counts "3:30" and "a.m." as two words: its numbers are digits, it has no abbreviation
        rules["word"] += f" | {n('abbr')} {cls(',;:')}?"
        rules["wend"] += f" | {n('abbrend')}"
        rules["abbr"] = _alts(ABBREVIATIONS)
        rules["abbrend"] = _alts(ABBREVIATIONS_ENDING)
    if lark:
        rules["stop"] = cls(".!?")
        rules["word_space"] = _word_space(rules["word"], whole)
    if extras:
        rules["extra"] = " | ".join(json_lit(w) for w in extras)
    return "".join(f"{n(name)}{': ' if lark else ' ::= '}{body}\n" for name, body in rules.items())


def _word_space(word: str, whole: bool) -> str:
    """The Lark terminal of a word that another follows: `word` (its punctuation included) and the space after it,
    for LLGuidance (grammar.with_word_list). As a `word` rule, a word ended at every listed word a token runs past
    ("Ġcomputer" of "Ġcomputerized") and LLGuidance's parser took a step there, about 1,700 parser rows a token;
    this terminal ends only at its space, so a word token (" house") never ends one, and a token's mask takes 40%
    fewer instructions in the embedded model's LLGuidance. The rest is its lexer reading the word list's 16k states
    along the tokens (benchmarks/grammars.py times both forms).

    It admits exactly what the `word` rule did: LLGuidance reads a unit as far as it can go on, so the rule refused
    a word whose punctuation could go on into a number or an abbreviation and did not ("In 1999, the": "1999," reads
    on as "1999,5"; "Plan A. Then": "A." as "A.M."). The terminal refuses the same (`_cut_short`)."""
    cut = " | ".join(_cut_short()) if whole else ""  # LIFEBench's numbers are plain digits, it has no abbreviation
    return f'(({word}) & ~({cut})) " "' if cut else f'({word}) " "'


def _cut_short() -> list[str]:
    """Lark alternatives of what a word-and-punctuation reads on past and then is no unit: a number cut at a dot,
    comma or colon (`NUMBER_CUT`), an abbreviation cut after one of its dots ("A." of "A.M.", "Ph." of "Ph.D.")."""
    cut = {a[: i + 1] for a in ABBREVIATIONS for i, ch in enumerate(a[:-1]) if ch in ",;:.!?"} - set(ABBREVIATIONS)
    return ["/" + NUMBER_CUT.replace("/", "\\/") + "/", *(json_lit(a) for a in sorted(cut))]


def _alts(words: Iterable[str]) -> str:
    """Literals as alternatives, the same in GBNF and Lark."""
    return " | ".join(json_lit(w) for w in words)


# ----- the same lists as LLGuidance Lark terminals -------------------------------------------------------------


def _regex_below(node: dict[str, dict]) -> str:
    """Regex for everything below `node` of the trie (single-child chains merged); optional if it may end there.
    Words are [a-z0-9'-]: nothing to escape."""
    ends = "" in node
    alts = []
    for ch in sorted(k for k in node if k):
        edge, child = ch, node[ch]
        while len(child) == 1 and "" not in child:
            (nxt,) = child
            edge, child = edge + nxt, child[nxt]
        alts.append(edge + _regex_below(child))
    if not alts:
        return ""
    one_char = len(alts) == 1 and len(alts[0]) == 1 and not ends
    return (alts[0] if one_char else "(?:" + "|".join(alts) + ")") + ("?" if ends else "")


def _word_regex(words: Iterable[str]) -> str:
    """`words` as one Lark regex terminal, a trie, each word's first letter in either case. LLGuidance compiles it
    to one lexer DFA, so a token's check walks the DFA instead of a trie of grammar rules; the trie form halves the
    text a request sends and the time to read it (about 0.1 s a request, embedded)."""
    root = _trie(words)
    alts = [(f"[{ch}{ch.upper()}]" if ch.isalpha() else ch) + _regex_below(root[ch]) for ch in sorted(root)]
    return "/(?:" + "|".join(alts) + ")/"


@cache
def english_regexes() -> tuple[str, str]:
    """(any word, a word that can end a sentence) as Lark terminal bodies, built once (0.1-0.2 s) and kept in the
    cache folder for later processes (named for the word list and this module's text); the second is the first
    without the dangling words (LLGuidance's `&` and `~`), not a second list."""
    words = _lettered()
    digest = hashlib.sha256(Path(__file__).read_bytes() + "\n".join(words).encode()).hexdigest()[:16]
    saved = cache_dir() / f"en-word-regex-{digest}.txt"
    regex = _read_text(saved)
    if not regex.startswith("/(?:"):  # missing, or cut short by hand: built again
        regex = _word_regex(words)
        write_whole(saved, lambda tmp: tmp.write_text(regex, encoding="utf-8"))
    return regex, "LEX & ~" + _word_regex(DANGLING)


def _read_text(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
    return text if text.endswith(")/") else ""


def chinese_lexicon_lark() -> str:
    """`chinese_lexicon_rules` as Lark terminals for LLGuidance."""
    chars = chinese_chars()
    enders = "".join(ch for ch in chars if ch not in ZH_DANGLING)
    rules = ("word: HAN /[，、；：。！？]/?", "wend: HANEND STOP", "STOP: /[。！？]/")
    rules += (f"HAN: /[{chars}]/", f"HANEND: /[{enders}]/")
    return "\n".join(rules) + "\n"


def chinese_lexicon_rules() -> str:
    """The Chinese `word`/`wend` rules drawn from a real character list (llama.cpp only)."""
    chars = chinese_chars()
    enders = "".join(ch for ch in chars if ch not in ZH_DANGLING)
    return f"word ::= han [，、；：。！？]?\nwend ::= hanend [。！？]\nhan ::= [{chars}]\nhanend ::= [{enders}]\n"
