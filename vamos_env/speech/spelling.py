"""Names spelled with a word for each letter, as people do on a bad line.

On a noisy line single letters are the first thing lost: "N O V A K" comes through
a street as "and OB the K". A word for each letter ("N as in November") survives,
because a recogniser hears a word far better than a letter, and the letter is the
word's first. The words are the ICAO/NATO spelling alphabet (a public standard).
"""

from __future__ import annotations

import difflib
import re

# The ICAO spelling alphabet; the standard writes Alfa and Juliett so that they read
# the same in every language, recognisers write Alpha and Juliet as often.
SPELLING_ALPHABET: dict[str, str] = {
    "A": "Alfa", "B": "Bravo", "C": "Charlie", "D": "Delta", "E": "Echo", "F": "Foxtrot",
    "G": "Golf", "H": "Hotel", "I": "India", "J": "Juliett", "K": "Kilo", "L": "Lima",
    "M": "Mike", "N": "November", "O": "Oscar", "P": "Papa", "Q": "Quebec", "R": "Romeo",
    "S": "Sierra", "T": "Tango", "U": "Uniform", "V": "Victor", "W": "Whiskey",
    "X": "X-ray", "Y": "Yankee", "Z": "Zulu",
}  # fmt: skip
_LETTER_OF = {word.lower().replace("-", ""): letter for letter, word in SPELLING_ALPHABET.items()}
_LETTER_OF |= {"alpha": "A", "juliet": "J", "whisky": "W", "xray": "X"}
# What Whisper writes for a letter's words too far from the alphabet word to count as
# close, heard in every room in the calm voice and the angry: "Lena" for Lima, and
# "Eisenhower" for all of "A as in Alfa".
_LETTER_OF |= {"lena": "L", "eisenhower": "A"}

# "K as in Kilo": the word after the joint, and what a recogniser makes of the joint
# ("is in", "has in", "as an").
_AS_IN = re.compile(r"\b(?:as|is|has|was|like)\s+(?:in|an)\s+(?P<word>[A-Za-z]+)", re.IGNORECASE)
_TOKEN = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)?")
# The marks inside a name ("Walsh-Obi", "O'Malley", "Van Horn"), said as words.
_MARKS = {"hyphen": "-", "dash": "-", "apostrophe": "'", "space": " "}
_MARK_WORDS = {"-": "hyphen", "'": "apostrophe", " ": "space"}


def _sound(word: str) -> str:
    """A word's consonants as they sound ("hyphen", "Hifen", "Hi Finn" are all "hfn"):
    "ph" and "gh" as said, y a vowel, doubled letters once, vowels after the first dropped."""
    word = re.sub(r"[^a-z]", "", word.lower()).replace("ph", "f").replace("gh", "")
    word = re.sub(r"(.)\1+", r"\1", word.replace("y", "i"))
    return word[:1] + re.sub(r"[aeiou]", "", word[1:])


_MARK_SOUNDS = {_sound(word): mark for word, mark in _MARKS.items()}

# The small words a surname may start with ("Van Horn", "de la Cruz"): a caller asked for
# the last name spells them too, and a listener takes them as part of it.
NAME_PARTICLES = frozenset(
    {"van", "von", "der", "den", "de", "di", "da", "del", "della", "la", "le", "du", "bin", "al"}
)
# A stretch that starts at the joint ("as in Oscar"): the letter before it was split off
# by a comma a recogniser put in ("Oh, as an Oscar").
# ("Oh, it was an Oscar": a short lowercase word may come first; a capital is a letter.)
# ("As Invictor": the joint's "in" run into the word.)
_STARTS_AT_JOINT = re.compile(
    r"^\s*(?:(?-i:[a-z]{2,3})\s+)?(?:as|is|has|was|like)\s+(?:in|an)(?:\b|(?=[a-z]{3}))",
    re.IGNORECASE,
)

# What may be split off before such a stretch: one short word, a letter as it sounds
# ("Oh", "Em", "Why"). A longer stretch that gave no letter ("Elas and Lena" for "L as in
# Lima") is a letter lost of its own, and the stretch after it ("he is an echo") its own.
_LETTER_SOUND = re.compile(r"^\s*[A-Za-z]{1,3}\s*$")
# A joint with the word said before it ("are as in Romeo", "and as in November").
_JOINT_WITH_LETTER = re.compile(
    r"(?<!\S)(?P<said>\S+)\s+(?:as|is|has|was|like)\s+(?:in|an)\s+[A-Za-z]", re.IGNORECASE
)
# "M.S. and Mike", "S.S. and Sierra", "U.S. and uniform": how Whisper writes "M as in Mike".
_ABBREVIATED_JOINT = re.compile(r"\b([A-Z])\.[Ss]\.?\s+(?=(?:and|in|an)\s+[A-Za-z])")


def last_name(full_name: str) -> str:
    """The surname of ``full_name``: its last word with the particles before it
    ("Elena Van Horn" -> "Van Horn"); the first word is never part of it."""
    words = full_name.split()
    start = len(words) - 1
    while start > 1 and words[start - 1].lower() in NAME_PARTICLES:
        start -= 1
    return " ".join(words[start:])


def name_part(full_name: str, index: int) -> str:
    """The first name (0), the middle names (1, "" for none) or the surname (-1, with its
    particles: "Van Horn") of ``full_name``; a one-word name is a first name only."""
    words = full_name.split()
    surname = len(last_name(full_name).split()) if len(words) > 1 else 0
    if index == 0:
        return " ".join(words[:1])
    if index == -1:
        return " ".join(words[len(words) - surname :])
    return " ".join(words[1 : len(words) - surname])


# How close a heard word must be to an alphabet word to be it ("Lina" for Lima).
_CLOSE = 0.75


def spelled(word: str, *, with_words: bool = True) -> str:
    """``word`` spelled out: "K as in Kilo, W as in Whiskey, ..." or, without words,
    "K W A M E." (letters only; what a caller says when simply asked to spell). A hyphen
    or an apostrophe in the name is said as one ("O, apostrophe, M, ..."), and so is the
    space between the words of a surname ("N, space, H" in "Van Horn")."""
    word = " ".join(word.split())
    characters = [c.upper() if c.isalpha() else c for c in word if c.isalpha() or c in _MARK_WORDS]
    if not any(c.isalpha() for c in characters):
        raise ValueError(f"cannot spell {word!r}: it has no letters")
    if not with_words:
        return " ".join(_MARK_WORDS.get(c, c) for c in characters) + "."
    return (
        ", ".join(
            _MARK_WORDS[c] if c in _MARK_WORDS else f"{c} as in {SPELLING_ALPHABET[c]}"
            for c in characters
        )
        + "."
    )


def find_spelled(text: str) -> str | None:
    """The word spelled in ``text``, capitalised ("Kwame", "O'Malley"); None when nothing
    was spelled, or when a letter of it did not come through (a wrong spelling would
    refute a right hearing: :func:`spelling_pattern` keeps what did come through)."""
    pattern = spelling_pattern(text)
    return None if pattern is None or LOST in pattern else pattern


# A letter of a spelling that did not come through, in :func:`spelling_pattern`.
LOST = "?"


def spelling_pattern(text: str) -> str | None:
    """The word spelled in ``text``, capitalised, with :data:`LOST` for each letter that did
    not come through ("E?En?" for "Echo, Alice and Lemon, Echo, November, Ice and Hover");
    None when nothing was spelled.

    Spelled with words, the spelling is read one stretch between commas at a time, each
    giving its letters by the alphabet's words in it ("Amazon Mike" is M, "Elas and
    Lina" is L: the letter said before its word is the first thing a line loses), else
    by the first letter of the word after "as in", else by a letter said alone; a stretch
    that gives none is one letter lost. Without any such words it is read from the
    letters said one by one ("K W A M E", or "KWAME" as a recogniser joins them).
    "hyphen", "apostrophe" and "space" keep their marks.
    """
    # "M as in Mike" written "M.S. and Mike": the letter and its joint as an abbreviation
    # (the "as" heard as "S"), which the commas and full stops below would split in three.
    text = _ABBREVIATED_JOINT.sub(r"\1 as ", text)
    stretches: list[str] = []
    read: list[list[str]] = []
    parts = (p for p in re.split(r"[,.;:?!]+", text) if p.strip())
    for part in (sub for p in parts for sub in _between_joints(p)):
        if (
            stretches
            and _LETTER_SOUND.match(stretches[-1])
            # Nothing read from it ("Oh"), or the very letter alone ("P. as in Papa").
            and (not read[-1] or stretches[-1].strip() in read[-1])
            and _STARTS_AT_JOINT.match(part)
        ):
            part = stretches.pop() + " " + part  # "Oh, as an Oscar": one letter, split by a comma
            read.pop()
        elif (
            stretches
            and not read[-1]
            and _mark_of(_tokens(joined := stretches[-1] + " " + part)) is not None
        ):
            part = joined  # "Hi, Finn.": a mark's word split in two by a comma
            stretches.pop()
            read.pop()
        stretches.append(part)
        read.append(_stretch(part))
    with_words = [bool(_AS_IN.search(part) or _alphabet_words(part)) for part in stretches]
    if any(with_words) and sum(len(p) for ps in read for p in ps if p.isalpha()) >= 2:
        pieces = [p for ps in read for p in (ps or [LOST])]
    else:
        pieces = []
        for token in re.findall(r"[A-Za-z]+", text):
            if token.isupper():
                pieces.append(token)
            elif token.lower() in _MARKS:
                pieces.append(_MARKS[token.lower()])
    if sum(len(p) for p in pieces if p.isalpha()) < 2:
        return None
    word = " ".join("".join(pieces).split()).strip("-' ")
    # A letter three times over is a recogniser repeating a stretch ("Elas and Lina" heard
    # three times for the two Ls of "Castillo"): no name has one, a name may have two.
    return name_cased(re.sub(r"([a-z])\1{2,}", r"\1\1", word, flags=re.IGNORECASE))


def name_cased(word: str) -> str:
    """Each part of a name capitalised: "Walsh-Obi", "O'Malley", "Van Horn"."""
    return re.sub(r"(^|[-' ])([a-z])", lambda m: m[1] + m[2].upper(), word.lower())


def find_letter(text: str) -> str | None:
    """The one letter said in ``text`` ("A.", "It's an A.", "A as in Alfa", "Alfa"); None
    when no letter, or more than one, was said."""
    words = _alphabet_words(text)
    if words:
        if len(words) > 1:
            return None
        said = [a for a in _letters_alone(text) if a in words[0]]
        return words[0] if len(words[0]) == 1 else (said[0] if said else None)
    match = _AS_IN.search(text)
    if match:
        return match["word"][0].upper()
    alone = _letters_alone(text)
    if len(alone) > 1:  # "I think it's A": the pronoun is not the letter
        alone = [t for t in alone if t != "I"]
    return alone[0] if len(alone) == 1 else None


def fits_spelling(word: str, pattern: str) -> bool:
    """Whether ``word`` is what ``pattern`` spells, a lost letter matching any one letter."""
    if len(word) != len(pattern):
        return False
    return all(p == LOST or p.lower() == w.lower() for w, p in zip(word, pattern, strict=True))


def _stretch(part: str) -> list[str]:
    """The letters (or mark) one stretch of a spelling with words gives; [] for none."""
    heard = _alphabet_words(part)
    if heard:
        # A word as close to two of the alphabet's ("olfa": Alfa or Golf) is the letter
        # said before it when that is one of them ("A as in olfa"), else a lost letter.
        alone = _letters_alone(part)
        letters = [c if len(c) == 1 else next((a for a in alone if a in c), LOST) for c in heard]
        last = _tokens(part)[-1]
        # The mark said after the letter with no comma between ("as a November Space").
        return [*letters, _MARKS[last]] if last in _MARKS else letters
    mark = _mark_of(_tokens(part))
    if mark is not None:
        return [mark]
    match = _AS_IN.search(part)
    if match:
        return [match["word"][0].upper()]
    return _letters_alone(part)[:1]


def _tokens(part: str) -> list[str]:
    return [t.lower() for t in _TOKEN.findall(part)]


def _mark_of(tokens: list[str]) -> str | None:
    """The mark a stretch's words say: its word ("hyphen"), a word heard near it alone
    ("Hiphon"), or one or two words that sound like it ("Hifen", "Hi Finn")."""
    if tokens and all(t in _MARKS for t in tokens):
        return _MARKS[tokens[0]]
    if len(tokens) == 1 and (near := difflib.get_close_matches(tokens[0], _MARKS, 1, 0.65)):
        return _MARKS[near[0]]
    if 1 <= len(tokens) <= 2:
        return _MARK_SOUNDS.get(_sound("".join(tokens)))
    return None


def _between_joints(part: str) -> list[str]:
    """``part`` cut before each letter and joint in it that follows other words: the
    commas a recogniser left out ("Dias and Brubbo are as in Romeo" is two letters, B lost
    and R; "Eisenhower and as in November" two). Words before a joint that give no letter
    and have none of four letters or more ("the D as in Delta") stay with it."""
    cuts = [0]
    for match in _JOINT_WITH_LETTER.finditer(part):
        start = match.start()
        if _alphabet_words(match["said"]):
            # "Elas and Lena is an echo": the word before is the last letter's own; the
            # letter of this joint was lost before it ("he is an echo").
            start = match.end("said")
        before = part[cuts[-1] : start]
        if before.strip() and (
            _stretch(before) or any(len(t) >= 4 for t in _TOKEN.findall(before))
        ):
            cuts.append(start)
    return [part[a:b] for a, b in zip(cuts, [*cuts[1:], len(part)], strict=True)]


def _closeness(key: str) -> dict[str, float]:
    """How close ``key`` is to each of the alphabet's words at least :data:`_CLOSE` close
    (scored as :func:`difflib.get_close_matches` scores, keeping every tie)."""
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(key)
    scores = {}
    for word in _LETTER_OF:
        matcher.set_seq1(word)
        if (
            matcher.real_quick_ratio() >= _CLOSE
            and matcher.quick_ratio() >= _CLOSE
            and (score := matcher.ratio()) >= _CLOSE
        ):
            scores[word] = score
    return scores


def _letters_alone(part: str) -> list[str]:
    """The capital letters said on their own in ``part``."""
    return [t for t in _TOKEN.findall(part) if len(t) == 1 and t.isupper()]


def _alphabet_words(part: str) -> list[str]:
    """The letters of the alphabet's words in ``part``, in order, close hearings included;
    a heard word as close to the words of several letters gives them all ("olfa": "AG")."""
    letters = []
    for token in _TOKEN.findall(part):
        key = token.lower().replace("-", "")
        if key in _LETTER_OF:
            letters.append(_LETTER_OF[key])
        elif len(key) >= 4:
            scores = _closeness(key)
            if scores:
                best = max(scores.values())
                tied = {_LETTER_OF[word] for word, score in scores.items() if score == best}
                letters.append("".join(sorted(tied)))
    return letters
