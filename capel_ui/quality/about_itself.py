"""A text that talks about itself instead of being the text: each function here is one way a model does it, and
returns what it said (as a warning quotes it) or None. `rules.RULES` holds them in order with their examples; the
first that finds something names it (`talks_about_itself`).

A writer's text may well start "Here is where…" or "Absolutely fresh…": only an opening that names what it is (a
post, a blurb, a version…) and ends on a colon or full stop is flagged, or a chat reply's "Sure!"/"Certainly,"."""

from __future__ import annotations

import re

from .circles import SENTENCE
from .words import words

ABOUT_ITSELF_SHOWN = 60
"""Characters of the opening quoted in the warning."""


def _opening(body: str) -> re.Pattern[str]:
    """`body` at the very start of a text, after at most three marks (quotes, a bullet)."""
    return re.compile(rf"^\W{{0,3}}(?:{body})", re.IGNORECASE)


_CHAT_OPENING = _opening(r"(?:sure|certainly|of course|absolutely|okay)\s*[!,.:]|as an ai\b[^\n]{0,40}?[,.:]")
"""A chat reply's opening, not the text: "Sure! …", "Certainly, here is …", "As an AI …"."""
_INTRODUCING = (
    r"(?:here(?:'s|’s| is| are)|below is)\s+(?:a|an|the|my|your|some|one|two|three)\b[^\n:.!?]{0,80}?"
    r"\b(?:possible|sample|suggested|draft|version|post|tweet|blurb|headline|text|description|sentence|paragraph"
    r"|summary|example|option|answer|response|rewrite|caption|tagline|slogan|ad|copy|message|words|abstract|bio"
    r"|note|invitation|intro|introduction|announcement|email|letter|review)\b[^\n:.!?]{0,100}?"
)
_INTRODUCTION = _opening(r"(?:[^\n.!?:,]{1,80},\s+)?" + _INTRODUCING + r"(?::|\.(?=\s|$))")
""""Here's a possible X post:", "Here is a 40-word blurb for …:", "Below is a short description:", also after a
lead-in clause ("To add a pinch of joy to your neighbourhood picnic, here's a sweet invitation to …: 200.12.2023")."""
_INTRODUCTION_INSIDE = re.compile(
    r"(?<=[.!?])\s+(?:" + _INTRODUCING + r":|(?:here(?:'s|’s| is)|below is)\s+(?:a|an)\s+(?:[\w'’-]+\s+){0,2}?"
    r"(?:sample|example|draft|version) of (?:(?:a|an|the|my|your) (?:[\w'’-]+\s+){0,3}?(?:description|post|tweet"
    r"|headline|blurb|caption|invitation|message|text|slogan|tagline|ad|email|letter|bio|summary|abstract"
    r"|announcement|review)|it|this)[.!]\s*$)",
    re.IGNORECASE,
)
"""The same after a sentence of the text, ending on its colon ("…even more special. Here's a sample of a fun and
creative invitation to your neighbourhood picnic: …"), or, as the text's last sentence, a sample or an example of a
text ("…the beauty of that tradition. Here's a sample of a product description.", "…Here's a possible version of
it.": nothing follows)."""
_LABEL = _opening(
    r"(?:[\w'’-]+\s+){0,2}?(?:title|headline|blurb|post|tweet|caption|answer|response|output|text|abstract"
    r"|description|tagline|slogan|subject\s+line|message|(?:google|facebook|bing)\s+ads?)\s*:|\d+[- ]words?\s*:"
    # the label alone, the whole text ("Text Message." for "Write a text message reminding…")
    r"|(?:[\w'’-]+\s+)?(?:title|headline|blurb|post|tweet|caption|abstract|description|tagline|slogan|message)\W{0,3}$"
)
"""A label before the text: "Title: …", "X Post: …", "Instagram caption: …", "Subject Line: …", "Text Message: …",
"Google Ads: …", "40 words: …"; or a label that is the whole text ("Text Message.")."""
_SAYING_WHAT_IT_IS = (
    r"(?:the|your|my|a|an|this|our)\s+(?:[\w'’-]+\s+){0,3}?(?:title|headline|blurb|post|tweet|caption|text"
    r"|description|abstract|summary|tagline|slogan|bio|message|version|answer|invitation|announcement)"
    r"(?:\s+(?:for|about)\s+[^\n:.!?]{1,60}?)?\s+(?:is|would be|could be|reads)\s*:"
)
_SAYS_WHAT_IT_IS = _opening(_SAYING_WHAT_IT_IS)
""""The product description is: …", "…description for a hand-made mug is: …", "Your new headline could be: …"."""
_SAYS_WHAT_IT_IS_INSIDE = re.compile(r"(?<=[.!,])\s+(?:so,?\s+)?" + _SAYING_WHAT_IT_IS, re.IGNORECASE)
"""The same after a sentence or a comma of the text (not after a question: "Will there be cake? The answer is:
yes!"): "…the word Vibrant. So, the invitation is: Vibrant Vampire Pizza.", "For your bike repair shop, the ad
headline is: …"."""
_ZH_INTRODUCTION = _opening(
    r"好的[，,！!。]|(?:以下是|下面是|这是)[^。！？\n]{0,30}?(?:文案|简介|介绍|微博|帖子|短文|文字|版本|内容|示例|句子)"
    r"[^。！？\n]{0,10}?[:：]|(?:标题|文案|答案)[:：]"
)
"""Chinese: "好的！", "以下是一段微博文案：", "标题："."""
_INTERJECTION = re.compile(
    r"^(?:awesome|great|perfect|alright|okay|ok|sure|certainly|absolutely|of course)[!,.]\s+(?=\S)", re.I
)
"""A chat reply's first word, before the opening that introduces the text: "Awesome! Here's a revised version…"."""

_CHAT = re.compile(
    # "I'm ready to help. What can I assist you with next time." (a 135M model's reply to "Describe the challenges…")
    r"\b(?:I(?:'m|’m| am) ready to (?:help|assist)|what (?:else )?can I (?:help|assist) you with"
    # "Awesome! Let me help you with that.", "I'm glad you asked for…", "To provide the requested information, please
    # add the exact number of words." (seed 57)
    r"|let me help you with (?:that|this)|I(?:'m|’m| am) glad you asked|to provide the requested (?:information|text)"
    # "…please send them a text message with this format." (the SMS preset, seed 41)
    r"|(?:with|in|using) (?:this|the following) format"
    # "…For the below instructions please add a dash too." (the picnic invitation, a new user's variant): not "See
    # the instructions below", where "below" follows
    r"|the (?:below|above) (?:instructions?|request|prompt|requirements?)"
    # "This instruction is concise, focused on a single sentence that provides…" (the Write page's default, seed 45)
    r"|this (?:instruction|prompt) (?:is|was|asks|requires|wants)"
    r"|(?:please|could you(?: please)?|can you) provide (?:me with |us with )?(?:the |more |some |any |your )?"
    r"(?:exact |specific |following )?(?:details?|information|specifics|context|topic|text you)"
    r"|I(?:'d| would) be happy to|I hope this helps|let me know if|as an? (?:[\w-]+ ){0,3}?AI"
    # "I'm not sure what to do here, …", "Please add your own sentence, in your own words." (walked, SMS and ads)
    r"|I(?:'m| am) not sure what (?:to do|you (?:mean|want))|(?:add|insert|write) your own (?:sentence|text|words)"
    r"|in your own words"
    # "…vary depending on the pool type. Please use a sentence to describe the opening hours of a pool." (a preset)
    r"|please (?:use|write) (?:a|one|the|your) (?:[\w-]+ )?(?:sentence|paragraph|words?) to\b"
    # "So, I'm unable to provide a perfect answer, but…" (a 135M model's reply to the instruction, 80 words)
    r"|I(?:'m| am) (?:unable|not able) to provide (?:a|an|the) (?:[\w-]+ )?(?:answer|response|example|text))\b"
    r"[^.!?\n]{0,40}|(?:please )?(?:respond|answer) with\s*:",
    re.IGNORECASE,
)
"""A chat reply inside the text: asking the writer for details ("X Post: Please provide…"), offering help, unsure
of the task or unable to do it, or handing it back ("Please respond with: …", "add your own sentence")."""
_PLATFORM_FORMS = "x post|tweet|headline|blurb|caption|description|sms|text message|ad"
_NAMES_ITS_FORM = re.compile(
    rf"\b(?:it|this)(?:'s|’s| is) (?:just |only |simply )?(?:an? |my |the |your )(?:[\w-]+ ){{0,3}}?"
    rf"(?:post|{_PLATFORM_FORMS})\s*(?=[.!?]|$)"
    rf"|^\W{{0,3}}this is (?:an? |my |the |your )(?:[\w-]+ ){{0,3}}?(?:{_PLATFORM_FORMS}) (?:about|for)\b",
    re.IGNORECASE,
)
"""The text naming what it is, as a sentence of its own ("…, and it is an X post.", "It is just a text message.")
or as its opening ("This is an X post about a new café…"; not "This is a post for everyone who…")."""
_ANSWER_GIVEN = re.compile(
    r"(?:^|(?<=[.!]\s))\W{0,3}(?:so,?\s+)?the\s+(?:final\s+|correct\s+|short\s+)?answer\s+is"
    r"(?:\s*:\s*[\w'’-]+(?:\s+[\w'’-]+){0,2}|\s+[$€£]?\d[\d,.]*%?|\s+(?:indeed|this|that|here|below|as follows))"
    r"(?:[.!?](?=\s|$)|$)",
    re.IGNORECASE,
)
"""A sentence that calls the text an answer and gives it: "…from harm. The answer is 80." (the count it was asked
for), "…Vibrant Vampire Pizza. The answer is: Vibrant." (a 135M model closing a quiz), or an answer with nothing
in it ("The answer is indeed.", what the ending search wrote in its place); not "The answer is Rayleigh
scattering.", "Ask any baker and the answer is: sourdough." (not a sentence of its own) or the answer to the text's
own question ("Will there be cake? The answer is: yes!")."""
_MAKERS = re.compile(r"\b(?:hugging ?face|smollm\w*|(?:ai|large) language model)\b", re.IGNORECASE)
"""The embedded model's own maker or kind, named in a text the instruction did not name it in: "Dear Hugging Face, I
hope this message finds you well…" for a post about a reading club (SmolLM2 was trained to say who made it). Not
"OpenAI" or "ChatGPT": a post about AI tools may well name them."""
_LENGTH_MENTION = re.compile(
    r"\b(?:(?:in|with) (?:just |only |exactly )?)?\d+ (?:words?|characters?)\b\s*:?|\d+\s*个?字\s*[:：]",
    re.IGNORECASE,
)
"""The text naming its own length ("12 words:", "In just 80 words", "280 characters"): the prompt's, not the
writer's."""
_VERB = re.compile(r"[A-Za-z]+")
_ASKED_FORM = re.compile(
    r"^\W{0,3}(?:write|compose|draft|create)\s+(?:an?|the|one)\s+(?:[\w-]+\s+){0,3}?(abstract|post|headline|blurb"
    r"|description|caption|tweet|bio|summary|email|letter|invitation|review)\b",
    re.IGNORECASE,
)


def _at_opening(pattern: re.Pattern[str], text: str) -> str | None:
    """What `pattern` finds at the text's opening, or after a chat reply's first word ("Awesome! Here's…")."""
    opening = text.lstrip()
    found = pattern.match(opening) or pattern.match(_INTERJECTION.sub("", opening, count=1))
    return quoted(found.group(), text) if found else None


def _inside(pattern: re.Pattern[str], text: str) -> str | None:
    """What `pattern` finds inside the text (after a sentence of it), whatever the instruction says (`_anywhere`
    spares what the instruction says too)."""
    found = pattern.search(text)
    return quoted(found.group(), text) if found else None


def _anywhere(pattern: re.Pattern[str], text: str, own_text: str) -> str | None:
    """What `pattern` finds anywhere in the text, unless the writer's instruction says it too."""
    found = pattern.search(text)
    return quoted(found.group(), text) if found and found.group().lower() not in own_text.lower() else None


def opens_as_a_chat_reply(text: str, own_text: str = "") -> str | None:
    """ "Sure!", "Certainly,", "As an AI model, …" as the text's first words."""
    return _at_opening(_CHAT_OPENING, text)


def introduces_itself(text: str, own_text: str = "") -> str | None:
    """ "Here's a possible X post:", "Awesome! Here's a revised version of the instructions:", at the opening or
    after a sentence, then a colon ("…even more special. Here's a sample of a fun and creative invitation: …")."""
    return _at_opening(_INTRODUCTION, text) or _inside(_INTRODUCTION_INSIDE, text)


def opens_with_a_label(text: str, own_text: str = "") -> str | None:
    """ "Headline: …", "X Post: …", "40 words: …"."""
    return _at_opening(_LABEL, text)


def says_what_it_is(text: str, own_text: str = "") -> str | None:
    """ "The product description for a hand-made ceramic mug is: …", at the opening or after a sentence ("…the
    word Vibrant. So, the invitation is: Vibrant Vampire Pizza."), or the request's own subject, then "is:" ("The
    study on bike lanes and road safety in three cities is: The study found…")."""
    found = _at_opening(_SAYS_WHAT_IT_IS, text) or _inside(_SAYS_WHAT_IT_IS_INSIDE, text)
    return found or _names_the_request_then_colon(text, own_text)


_SUBJECT_IS = re.compile(
    r"^\W{0,3}(?:the|a|an|this|our|my|your)\s+([^:.!?\n]{3,80}?)\s+(?:is|are)\s*:(?=\s*(?-i:[A-Z0-9]))", re.IGNORECASE
)
"""An opening noun phrase, then "is:" and a new sentence or a list ("The study on bike lanes … is: The study found";
not "The benefits of walking are: better sleep and less stress.", a sentence of its own)."""


def _names_the_request_then_colon(text: str, own_text: str) -> str | None:
    """The opening `_SUBJECT_IS` when its noun phrase holds three words in a row of the instruction: the text names
    what it was asked to be about, then gives it."""
    found = _SUBJECT_IS.match(text.lstrip())
    if found is None or not own_text:
        return None
    asked = " " + " ".join(words(own_text.lower())) + " "
    said = words(found.group(1).lower())
    runs = (" " + " ".join(said[i : i + 3]) + " " for i in range(len(said) - 2))
    return quoted(found.group(), text) if any(run in asked for run in runs) else None


def introduces_itself_in_chinese(text: str, own_text: str = "") -> str | None:
    """ "以下是一段介绍北京的文案：", "好的！", "标题："."""
    return _at_opening(_ZH_INTRODUCTION, text)


def chats(text: str, own_text: str = "") -> str | None:
    """A chat reply anywhere in the text ("Please provide the details…", "I hope this helps"), unless the writer's
    instruction says it too."""
    return _anywhere(_CHAT, text, own_text)


def names_its_form(text: str, own_text: str = "") -> str | None:
    """ "…, and it is an X post.", "This is an X post about…", unless the instruction says it too."""
    return _anywhere(_NAMES_ITS_FORM, text, own_text)


def gives_its_answer(text: str, own_text: str = "") -> str | None:
    """ "The answer is 80.", "The answer is: Vibrant.", unless a question comes before it, the instruction's ("What is
    six times seven?") or the text's own ("Will there be cake? The answer is: yes!"), or the instruction says it
    too."""
    return None if "?" in own_text else _anywhere(_ANSWER_GIVEN, text, own_text)


_ANSWER_WORD = re.compile(r"\W{0,3}(?:the\s+)?answer\W{0,3}", re.IGNORECASE)


def closes_on_the_word_answer(text: str, own_text: str = "") -> str | None:
    """ "…promises to be a night to remember. Answer.": a last sentence that is only the word, after a sentence of
    three words or more (not the slogan "Ask. Listen. Answer."), unless the instruction says "answer" itself."""
    sentences = SENTENCE.findall(text)
    if len(sentences) < 2 or "answer" in own_text.lower() or not _ANSWER_WORD.fullmatch(sentences[-1].strip()):
        return None
    return quoted(sentences[-1].strip(), text) if len(sentences[-2].split()) >= 3 else None


def names_its_maker(text: str, own_text: str = "") -> str | None:
    """ "Dear Hugging Face, …" in a text whose instruction names no Hugging Face."""
    return _anywhere(_MAKERS, text, own_text)


_MAKE_VERBS = "create|write|craft|compose|make|draft|design|prepare"
"""The verbs of making a text: an instruction's ("Write…") and the model's announcement's ("I'll create…")."""


def says_it_will_do_the_task(text: str, own_text: str = "") -> str | None:
    """ "I'll remind the customer that…" for "Remind a customer…": the model saying what it will do with the request
    (its first word, the verb of an instruction) instead of doing it. Not for a verb of making ("Write…"): a letter
    says "I'll write to you soon"; the model announcing the form it was asked to make is
    `says_it_will_write_the_form`'s."""
    verb = _VERB.match(own_text.lstrip())
    if verb is None or verb.group().lower() in _MAKE_VERBS.split("|"):
        return None
    said = re.search(rf"\bI(?:'ll|’ll| will| can| am going to) {verb.group()}\b[^.!?\n]{{0,60}}", text, re.IGNORECASE)
    return quoted(said.group(), text) if said else None


_WILL_MAKE = (
    rf"\b(?:I(?:'ll|’ll| will| can|'m going to|’m going to| am going to)|we(?:'ll|’ll| will| can)|let me)\s+"
    rf"(?:{_MAKE_VERBS})\s+"
)
"""The model announcing that it will make something ("I'll create", "Let me write", "We can create")."""


def says_it_will_write_the_form(text: str, own_text: str = "") -> str | None:
    """ "To help a new friend, I'll create a fun and inviting invitation: …" for "Write an invitation…": the model
    announcing the very thing it was asked to write, then describing it instead of being it."""
    return _of_the_asked_form(_WILL_MAKE + r"(?:[\w'’-]+\s+){0,5}?FORM\b[^.!?\n]{0,30}", text, own_text)


def opens_on_the_asked_form(text: str, own_text: str = "") -> str | None:
    """ "The abstract for a study on … includes an assertion about …" for "Write an abstract for a study…": a text
    that opens on the very thing it was asked to be, as its subject, describes it instead of being it."""
    return _of_the_asked_form(
        r"^\W{0,3}(?:the|this|my|our|your)\s+(?:[\w'’-]+\s+){0,2}?FORM\s+(?:for|of|on|about|is about|highlights"
        r"|describes|showcases|outlines|summari[sz]es|captures|presents|introduces|emphasi[sz]es)\b[^.!?\n]{0,30}",
        text,
        own_text,
    )


_ADVICE = (
    r"(?:should|needs? to|is meant to|aims to|ought to)\s+(?:inspire|capture|grab|convey|highlight|reflect|include"
    r"|attract|engage|summari[sz]e|describe|explain|mention|tell|be\s+(?:short|concise|catchy|clear|engaging|brief"
    r"|written|an?\s+(?:mix|blend|combination)\b))"
)
"""Advice on how a text should be written ("should inspire readers", "needs to be catchy")."""


def advises_on_the_asked_form(text: str, own_text: str = "") -> str | None:
    """ "…by Emily May-Bourne. The headline should inspire readers." for "Write a headline about a lighthouse.", also
    after a lead-in clause ("To help the city decorate, the invitation should include a colorful map…"): a sentence of
    advice on the very thing it was asked to be is the model talking about the task, not the text."""
    return _of_the_asked_form(
        r"(?:^|(?<=[.!?])\s+)(?:[^\n.!?:,]{1,60},\s+)?\W{0,3}(?:the|a good|a great|every|your|this)\s+"
        r"(?:[\w-]+\s+){0,2}?FORMs?\s+" + _ADVICE + r"\b[^.!?\n]{0,30}",
        text,
        own_text,
    )


def _of_the_asked_form(pattern: str, text: str, own_text: str) -> str | None:
    """What `pattern` finds in `text`, its `FORM` the form the instruction asks for ("headline" of "Write a headline
    about…"); None where the instruction asks for no form."""
    asked = _ASKED_FORM.match(own_text)
    if asked is None:
        return None
    said = re.search(pattern.replace("FORM", re.escape(asked.group(1))), text, re.IGNORECASE)
    return quoted(said.group(), text) if said else None


def names_its_length(text: str, own_text: str = "") -> str | None:
    """Its own length named anywhere ("12 words:", "In just 80 words,"), unless the instruction names it so."""
    own = own_text.lower()
    mention = next((m for m in _LENGTH_MENTION.finditer(text) if m.group().strip(" :：").lower() not in own), None)
    return quoted(mention.group(), text) if mention else None


def quoted(found: str, text: str) -> str:
    """`found` (a match in `text`) as a warning quotes it: stripped, without a word it cut in two, at most
    `ABOUT_ITSELF_SHOWN` characters."""
    return shown(_whole_words(found.strip(), text))


def shown(phrase: str) -> str:
    """`phrase` as a warning quotes it: at most `ABOUT_ITSELF_SHOWN` characters, cut after a whole word."""
    if len(phrase) <= ABOUT_ITSELF_SHOWN:
        return phrase
    cut = phrase[: ABOUT_ITSELF_SHOWN - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut and phrase[len(cut)].isalnum() else cut).rstrip(" ,;:") + "…"


def _whole_words(found: str, text: str) -> str:
    """`found` (a match that took at most so many characters of `text`) without a word it cut in two, and "…" for
    what follows: "I'll remind the customer that the service is…", not "…is curren"."""
    at = text.find(found)
    end = at + len(found)
    if at < 0 or end >= len(text) or not (found[-1:].isalnum() and text[end].isalnum()) or " " not in found:
        return found
    return found.rsplit(" ", 1)[0].rstrip(" ,;:") + "…"
