"""The quality rules as records: each `Rule` finds one way a finished text goes wrong, names the `Kind` of warning it
gives, and carries the texts that justify it: `flags`, texts it must flag, and `passes`, a writer's texts it must
leave alone ("Plan B.", "The title of the book is: War and Peace.", "reworked"). `runner.warnings` runs `RULES` in
order; tests/test_quality_rules.py runs every example both ways. Adding a rule is one record and its examples (and
a `Kind` in kinds.py if it warns of something new)."""

from __future__ import annotations

from . import about_itself, echo
from .circles import doubled
from .kinds import (
    BLANK,
    DANGLING,
    DOUBLED,
    ECHO,
    FORM,
    GLUED,
    LANGUAGE,
    LOOP,
    META,
    NONWORD,
    NUMBERS,
    REPEAT,
    RESTATED,
    SALAD,
    SECTION,
    Kind,
)
from .record import Context, Detector, Rule, one
from .shapes import blanks, form_fields, number_list, section_heading, word_salad
from .words import dangling_end


def _words_of(kind: Kind) -> Detector:
    """The text's words of `kind` (glued, nonword), each once, in reading order."""
    return lambda c: [w for w, k in c.word_kinds.items() if k == kind.name]


def _doubled(c: Context) -> list[str]:
    """Words joined to themselves, unless the text goes round in circles ("Same Same" in a loop is the loop) or the
    word is already a glued or unknown one ("thesigns and thesigns" is the glued word)."""
    if c.goes_round_in_circles:
        return []
    named = {w.lower() for w in c.word_kinds}
    return [p for p in doubled(c.text, c.own_text) if p.split()[0].lower() not in named]


def _salad(c: Context) -> list[str]:
    """An English text's first six words when it is word salad (`word_salad`)."""
    found = c.words
    return [" ".join(found[:6]) + (" …" if len(found) > 6 else "")] if c.lang == "en" and word_salad(found) else []


_REMINDER = "Remind a patient of a dental appointment on Tuesday at 3:30 pm with Dr. Patel."
_GARAGE = "Remind a customer that their car service is on Friday at 9:15 am at Hill Garage."
_ADVERTISE = "Advertise a family-run bike repair shop in Portland."
_ABSTRACT = "Write an abstract for a study showing that countdown prompts help language models hit exact lengths."
_PUB = "Write 80 words about a seaside pub called The Whaler's Rest."
_INVITE = "Write an invitation to a neighbourhood picnic."
_STRESS = "Explain how stress affects the body."
_BAKERY = "Write a headline for a bakery's grand opening."
_TIPS = "Give three tips for staying focused while studying."
_MOTIVATED = "Give advice on staying motivated at work."
_NOTE = "SmolLM2 does not write Chinese: the count is right, but the text is not meaningful Chinese."
_ZH = "我们喜欢海边的书店。"

RULES: tuple[Rule, ...] = (
    Rule(
        "language",
        LANGUAGE,
        "a text in a language the model does not write (the provider's own sentence)",
        lambda c: [c.language_note] if c.language_note else [],
        flags=(Context(_ZH, "zh", language_note=_NOTE),),
        passes=(Context(_ZH, "zh"),),
    ),
    Rule(
        "the request's opening",
        ECHO,
        "a short text that is the request's opening word for word",
        one(echo.is_the_requests_opening),
        flags=(Context("Advertise a dog.", own_text="Advertise a dog grooming salon in Bristol."),),
        passes=(
            Context("Dog grooming in Bristol.", own_text="Dog grooming in Bristol: write an ad headline."),
            Context("Bristol.", own_text="Advertise a dog grooming salon in Bristol."),
        ),
    ),
    Rule(
        "the order given back",
        ECHO,
        "a text opening with the request's order (“Advertise a …”)",
        one(echo.opens_with_the_order),
        flags=(Context("Advertise a family business in Portland with a bike repair shop.", own_text=_ADVERTISE),),
        passes=(
            Context("Advertise with us and reach thousands of readers.", own_text="Advertise a newspaper's ad space."),
            Context("Write to us today!", own_text="Write an ad for a tea shop."),
        ),
    ),
    Rule(
        "the request given back",
        ECHO,
        "the request's first five words, in order, anywhere in the text",
        one(echo.gives_back_the_request),
        flags=(
            Context(_REMINDER, own_text=_REMINDER),
            Context("The task: Detail how you can remind a patient of a dental appointment.", own_text=_REMINDER),
            Context(
                "Describe a traditional Italian pizza. It is round.", own_text="Describe a traditional Italian pizza."
            ),
        ),
        passes=(
            Context("Hi! Your dental appointment is on Tuesday at 3:30 pm with Dr. Patel.", own_text=_REMINDER),
            Context("The capital of France is Paris.", own_text="What is the capital of France?"),
            Context(
                "Rewrite the following text, keeping its meaning and tone: fine.",
                own_text="Rewrite the following text, keeping its meaning and tone:\n\nFine.",
            ),
        ),
    ),
    Rule(
        "a chat reply's opening",
        META,
        "a chat reply's first words (“Sure!”, “Certainly,”, “As an AI…”)",
        one(about_itself.opens_as_a_chat_reply),
        flags=("Sure! Our bakery sells sourdough.", "Certainly, here is the text you asked for."),
        passes=("Absolutely fresh bread every day.", "Of course the bread is fresh.", "Surely you know our bakery."),
    ),
    Rule(
        "an introduction",
        META,
        "an opening that introduces the text (“Here's a possible X post:”), or a sentence that does, then a colon",
        one(about_itself.introduces_itself),
        flags=(
            "Here's a possible X post: our bakery sells fresh sourdough on Saturdays.",
            "Here is a short blurb for the bakery. Fresh sourdough every Saturday.",
            "Awesome! Here's a revised version of the instructions: 10:10pm today.",
            "I'll offer you a special treat. Here's a sample of a fun invitation to your picnic: come at noon.",
            "A leather wallet is an excellent example of that tradition. Here's a sample of a product description.",
            "Everyone is welcome to join us in the park. Here's a possible version of it.",
            "Here's a sample of the headline for the primary school teacher, Emily Johnson, who teaches coding: Emily.",
            "To add a pinch of joy to your picnic, here's a sweet invitation to your favorite eater: 200.12.2023.",
        ),
        passes=(
            "Here is where the magic happens. Come in.",
            "Bring a blanket. Here is the menu: sandwiches and lemonade.",
            "Bring a blanket. Here is a note for the kids.",
            "Here is our new sourdough, baked fresh.",
            "Here are three reasons to visit us: bread, coffee and cake.",
            "Here is the word on the street: bread.",
            "Taste before you buy. Here is an example of our care for every loaf.",
            "Our first loaf was a disaster. Here is the second version of it, baked with care.",
            "Bring a blanket, here is the menu: sandwiches and lemonade.",
            "To celebrate summer, here is our new sourdough, baked fresh.",
        ),
    ),
    Rule(
        "a label",
        META,
        "a label before the text (“Headline:”, “X Post:”, “40 words:”), or a label that is the whole text",
        one(about_itself.opens_with_a_label),
        flags=(
            "Headline: Fresh bread on Saturdays",
            "X Post: Please provide the details of the event.",
            "Subject Line: Spring Gardening: A Guide to the Ultimate Guide to Happy.",
            "Text Message: Please update your car service schedule with us for Friday.",
            "Google Ads: A prefect version of your service, designed with clarity and simplicity.",
            "Text Message.",
        ),
        passes=(
            "Great! Our bakery now opens at six.",
            "The story of our bakery is simple: bread, every day.",
            "Subject: your order has shipped.",
            "Bad ads: the ones that shout. Ours whisper.",
            "Send a message.",
        ),
    ),
    Rule(
        "says what it is",
        META,
        "an opening that says what the text is (“The product description is:”), or a sentence that does",
        one(about_itself.says_what_it_is),
        flags=(
            "The product description for a hand-made ceramic mug is: A beautiful, hand-crafted mug.",
            Context(
                "To make a fabulous neighbourhood picnic invitation, we just need to add the word Vibrant to the end of"
                " the invitation. So, the invitation is: Vibrant Vampire Pizza. This includes the words.",
                own_text=_INVITE,
            ),
            "For your bike repair shop in Portland, the ad headline is: A family-owned bike repair shop.",
            Context(
                "The study on bike lanes and road safety in three cities is: The study found a link.",
                own_text="Write an abstract for a study on bike lanes and road safety in three cities.",
            ),
        ),
        passes=(
            "The title of the book is: War and Peace.",
            "Bring a blanket. The title of the book is: War and Peace.",
            "Bring a blanket, and the answer is: sunshine.",
            "We open at noon. The message is simple: bring friends.",
            Context("The title of the book is: War and Peace.", own_text="Write about a book you love."),
            Context(
                "The benefits of walking every day are: better sleep and less stress.",
                own_text="Write about the benefits of walking every day.",
            ),
        ),
    ),
    Rule(
        "gives its answer",
        META,
        "a sentence that calls the text an answer and gives it (“The answer is 80.”, “The answer is: Vibrant.”)",
        one(about_itself.gives_its_answer),
        flags=(
            Context("Stress is a natural response that protects the body. The answer is 80.", own_text=_STRESS),
            Context("So, the invitation is: Vibrant Vampire Pizza. The answer is: Vibrant.", own_text=_INVITE),
            Context("So, the invitation is: Vibrant Vampire Pizza. The answer is indeed.", own_text=_INVITE),
        ),
        passes=(
            Context("The answer is Rayleigh scattering.", own_text="Explain why the sky is blue."),
            "The answer is simple: rest more and worry less.",
            "Ask any baker and the answer is: sourdough.",
            Context("The answer is 42.", own_text="What is six times seven?"),
            Context("Will there be cake? The answer is: yes!", own_text=_INVITE),
            "Stress is hard on the heart, and the answer is this: rest.",
        ),
    ),
    Rule(
        "the word “answer” at its end",
        META,
        "a last sentence that is only the word “Answer.”, after a sentence of the text",
        one(about_itself.closes_on_the_word_answer),
        flags=(
            Context("The Baker's Grand opening promises to be a night to remember. Answer.", own_text=_BAKERY),
            "Stress makes the heart beat faster. The answer.",
        ),
        passes=(
            "Ask. Listen. Answer.",
            "Call us today. We always answer.",
            Context("Six times seven is 42. Answer.", own_text="Answer: what is six times seven?"),
        ),
    ),
    Rule(
        "a Chinese introduction",
        META,
        "a Chinese opening that introduces the text (“以下是…文案：”, “好的！”)",
        one(about_itself.introduces_itself_in_chinese),
        flags=(
            Context("以下是一段介绍北京的文案：北京是中国的首都。", "zh"),
            Context("好的！北京是中国的首都。", "zh"),
        ),
        passes=(Context("北京是中国的首都。这是一座城市：古老而年轻。", "zh"),),
    ),
    Rule(
        "a chat reply",
        META,
        "a chat reply inside the text: asking for details, offering help, unsure of the task or unable to do it,"
        " handing it back",
        one(about_itself.chats),
        flags=(
            "Great news for everyone. Please provide the details so I can help you.",
            "Please respond with: Reminder: My car service is on Friday.",
            "Please add your own sentence, in your own words.",
            "So, I'm unable to provide a perfect answer, but learning a new language is hard.",
            "Hours vary by pool. Please use a sentence to describe the opening hours of a pool.",
            "To enhance your understanding, please provide the exact detail, such as the language you speak.",
            "I'm ready to help. What can I assist you with next time.",
            "Awesome! Let me help you with that. Learning a new language is a complex task.",
            "Awesome! I'm glad you asked for a more precise description.",
            "To provide the requested information, please add the exact number of words.",
            "To remind a customer to book their table for 7 pm on Friday, please send them a text message with this"
            " format.",
            "Please add a dash of creativity to your invitation. For the below instructions please add a dash too.",
            "This instruction is concise, focused on a single sentence that provides a clear explanation.",
        ),
        passes=(
            "Please provide feedback on our menu at the counter.",
            "Please provide the exact date on your booking form.",
            "Hi, I'm Sam from the bakery. How can I help you today?",
            "We are ready to help you plan the perfect party.",
            "Let me help you carry the hamper to the park.",
            "We have the requested parts in stock.",
            "Our menu is now in a new format: small plates to share.",
            "We are unable to provide refunds on sale items.",
            "I am not able to provide a discount this week, but the bread is still fresh.",
            "Reply YES to confirm your booking.",
            "See the instructions below to assemble your bottle.",
            "The above prices include tax.",
            "Follow this instruction sheet: fill the bottle, then close the cap.",
            "We're not sure what the weather will do, so bring a coat.",
        ),
    ),
    Rule(
        "names its form",
        META,
        "the text saying what it is (“…, and it is an X post.”, “This is an X post about…”)",
        one(about_itself.names_its_form),
        flags=("The library hosts a free coding workshop on Saturday, and it is an X post.", "This is a tweet!"),
        passes=(
            "It is the headline act of the night.",
            "This is a post-war building.",
            "This is a post for everyone who loves coffee.",
        ),
    ),
    Rule(
        "advice on the asked form",
        META,
        "a sentence of advice on the very thing the instruction asked for (“The headline should inspire readers.”)",
        one(about_itself.advises_on_the_asked_form),
        flags=(
            Context(
                "Lighthouse: The Golden Sails by Emily May-Bourne. The headline should inspire readers.",
                own_text="Write a headline about a lighthouse.",
            ),
            Context("Join us at noon. A good invitation needs to be short and clear.", own_text=_INVITE),
            Context(
                "The Google Ads description should be a mix of English and Spanish to reflect the unique.",
                own_text="Write a Google Ads description for an online Spanish course for beginners.",
            ),
            Context(
                "To help the city decorate, the invitation should include a colorful map of the picnic spots.",
                own_text=_INVITE,
            ),
        ),
        passes=(
            Context("This invitation should be shown at the gate. Join us at noon!", own_text=_INVITE),
            Context("When you arrive, the invitation should be shown at the gate.", own_text=_INVITE),
            Context("The headline act should inspire everyone.", own_text="Write a post about the festival."),
            Context("Every post should inspire you to read more.", own_text="Write a headline about our blog."),
        ),
    ),
    Rule(
        "names its maker",
        META,
        "the model's own maker or kind (“Hugging Face”, “AI language model”) the instruction did not name",
        one(about_itself.names_its_maker),
        flags=("Dear Hugging Face, I hope this message finds you well.",),
        passes=(
            "Teachers now plan lessons with ChatGPT and other AI tools.",
            Context(
                "Hugging Face opens an office in London.", own_text="Write a headline: Hugging Face opens an office."
            ),
        ),
    ),
    Rule(
        "will do the task",
        META,
        "the model saying what it will do with the request (“I'll remind the customer…”)",
        one(about_itself.says_it_will_do_the_task),
        flags=(Context("I'll remind the customer that the service is at 9:15pm.", own_text=_GARAGE),),
        passes=(
            Context(
                "Your car service is on Friday at 9:15 am at Hill Garage. We'll remind you again.", own_text=_GARAGE
            ),
            Context("I'll see you on Friday at 9:15 am at Hill Garage.", own_text=_GARAGE),
            Context("Come along at noon! I'll write to you with the menu next week.", own_text=_INVITE),
        ),
    ),
    Rule(
        "will write the asked form",
        META,
        "the model announcing that it will write the very thing it was asked for (“I'll create a fun invitation…”)",
        one(about_itself.says_it_will_write_the_form),
        flags=(
            Context(
                "To help a new friend, I'll create a fun and inviting invitation: A simple and creative invitation to a"
                " neighbourhood picnic. Instead of a traditional invitation, I'll use a bold and creative image.",
                own_text=_INVITE,
            ),
            Context("Let me write a catchy headline for the bakery.", own_text="Write a headline about our bakery."),
            Context("I am going to draft a short blurb about the shop.", own_text="Write a blurb about our shop."),
            Context(
                "We can create an invitation to a neighbourhood picnic that highlights the local area.",
                own_text=_INVITE,
            ),
        ),
        passes=(
            Context("Bring a blanket; I'll make a sign for the gate and a cake for everyone.", own_text=_INVITE),
            Context("Come along! I'll make the invitations myself next year.", own_text=_INVITE),
            Context("Let me know by Friday; I'll prepare the lemonade.", own_text=_INVITE),
            Context("Let me create a fun invitation for you.", own_text="Describe a picnic in the park."),
            Context("Together we can make this picnic the best one yet.", own_text=_INVITE),
        ),
    ),
    Rule(
        "opens on the asked form",
        META,
        "a text opening on the very thing it was asked to be, as its subject (“The abstract for a study…”)",
        one(about_itself.opens_on_the_asked_form),
        flags=(
            Context("The abstract for a study on countdown prompts includes an assertion.", own_text=_ABSTRACT),
            Context("This post is about our new sourdough.", own_text="Write a social media post about our sourdough."),
            Context(
                "This product description highlights the main features of the steel water bottle.",
                own_text="Write a short product description for a steel water bottle.",
            ),
            Context(
                "This product description emphasizes the eco-friendly materials used in the bottle.",
                own_text="Write a short product description for a steel water bottle.",
            ),
            Context("The study's abstract highlights the impact of countdown prompts.", own_text=_ABSTRACT),
        ),
        passes=(
            Context("The post office reopens on Monday.", own_text="Write a social media post about the post office."),
            Context(
                "The study of sleep shows that teens need more.", own_text="Write an abstract for a study of sleep."
            ),
        ),
    ),
    Rule(
        "names its length",
        META,
        "its own length named (“12 words:”, “In just 80 words”), unless the instruction names it so",
        one(about_itself.names_its_length),
        flags=(
            "In just 80 words, the Whaler's Rest is the ultimate destination.",
            Context("北京是首都。30个字：很好。", "zh"),
        ),
        passes=(
            Context("Our 50 words: we study bread.", own_text="Summarise in 50 words"),
            "Open 24 hours, 7 days a week.",
            "A 3-word slogan wins.",
        ),
    ),
    Rule(
        "unknown word",
        NONWORD,
        "a word wordfreq has never seen, unless the writer used it",
        _words_of(NONWORD),
        flags=("Mozzarella di bulbele and Parmiglie.", "A slice of Zorblaxian cheese."),
        passes=(
            Context("Welcome to Zyxco's new café.", own_text="Write for Zyxco"),
            "Open 24/7 since 1999, well-known.",
            "“Curly quotes” don’t hide words.",
            Context("灯塔很美", "zh"),
        ),
        reading_order=True,
    ),
    Rule(
        "glued words",
        GLUED,
        "two words run together (“thesigns”, “positiveMindset”), even when wordfreq knows them (“ofthe”), unless a"
        " spelling dictionary lists the word (“soup”, “noon”, “onto”: data/scowl/compounds.txt)",
        _words_of(GLUED),
        flags=("by reducing thesigns.", "the reminds ofthe.", "It promotes a positiveMindset.", "Thankyou for coming."),
        passes=(
            "Lunch at noon: a soup poured onto bread.",
            "The recipe was reworked for the new menu.",
            "Our Haircare line is gentle on every scalp.",
            "A woodfired oven bakes every pizza.",
            "A lifelong love of waterproof skincare.",
            "into another theater",
        ),
        reading_order=True,
    ),
    Rule(
        "a word over and over",
        REPEAT,
        "a word three times or more in a row",
        lambda c: c.repeats,
        flags=("the the the the best", "Girls, Girls, girls and you?", Context("好好好", "zh")),
        passes=("very, very good", "It had had its day."),
    ),
    Rule(
        "a phrase again and again",
        LOOP,
        "a phrase back to back, the same phrase three times anywhere (eight English words or more: twice), or one"
        " word a fifth of the text",
        lambda c: c.loops,
        flags=(
            "enforcement de lame, enforcement de lame, and more.",
            Context(
                "The Whaler's Rest is a must-visit destination in the Whale's Rest, offering a unique blend of local"
                " cuisine. The Whaler's Rest's a must-visit destination in the Whale's Rest, offering a unique blend"
                " of local cuisine.",
                own_text=_PUB,
            ),
            "go team go team go team!",
            "arugula, arugula with arugula, and arugula with fresh basil on top.",
            "New Same What Same Same Now",
            Context("我们喜欢海边我们喜欢海边我们喜欢海边。", "zh"),
        ),
        passes=(
            "very good, very good indeed.",
            "Our bread is baked fresh every single morning. Taste why our bread is baked fresh every single day.",
            "One of the best, one of the most loved, one of the greats.",
            "Bake the dough, top the dough and serve the dough hot.",
            Context(
                "The Whaler's Rest is a beloved pub on the coast. The Whaler's Rest is not just a pub but a warm "
                "welcome. Locals agree the Whaler's Rest is the place to be.",
                own_text=_PUB,
            ),
        ),
    ),
    Rule(
        "a sentence twice",
        LOOP,
        "a sentence of four words or more written twice",
        lambda c: c.sentences_twice,
        flags=(
            "The Whaler's Rest is a premium pub by the sea. Come in. The Whaler's Rest is a premium pub by the sea.",
        ),
        passes=("Thank you. Thank you.",),
    ),
    Rule(
        "a title said again",
        RESTATED,
        "a sentence, or a title before a colon, of three words or more said twice, unless the text goes round in"
        " circles already",
        lambda c: [] if c.goes_round_in_circles else c.said_again,
        flags=(
            "The Lighthouse's Promise: A World of Hope and Promise. The Lighthouse's Promise.",
            "Fresh bread daily: baked at dawn in our oven. Fresh bread daily!",
            "Join us Sunday. Bring a blanket and a friend. Join us Sunday!",
        ),
        passes=(
            "Thank you. Thank you.",
            "Come in today: the sea is calm. Come in today and stay for lunch.",
            "The Whaler's Rest: a pub by the sea. The Whaler's Rest has fresh fish.",
            "The Whaler's Rest is a premium pub by the sea. Come in. The Whaler's Rest is a premium pub by the sea.",
        ),
    ),
    Rule(
        "a word twice",
        DOUBLED,
        "a word joined to itself (“dedicated and dedicated”), unless a loop or a glued word says it already",
        _doubled,
        flags=("We are a dedicated and dedicated team of bakers.", "Our fresh fresh bread."),
        passes=(
            "It had had its day, and that that was so.",
            "New Same What Same Same Now",  # the loop says it
            "A thesigns and thesigns with bulbele",  # the glued word says it
            Context("A dedicated and dedicated team.", own_text="Write about our dedicated and dedicated team."),
        ),
    ),
    Rule(
        "word salad",
        SALAD,
        "eight words or more with not one small word (“a”, “the”, “and”) in English",
        _salad,
        flags=("Fresh Bread Daily Best Prices Portland Bakery Open Sundays Great Taste",),
        passes=("Bike Repair Portland: A New Era for riders.", "Fresh bread daily at the best prices in Portland."),
    ),
    Rule(
        "a number list",
        NUMBERS,
        "three enumerators or more (“1.”, “2)”, “1.2.1”), numbers a third of the text or four or more in a row,"
        " unless a list was asked for",
        one(number_list),
        flags=(
            "The words: 1. Stone 2. Ware 3. Dish 4. Pot.",
            "Tips 1) rest 2) eat 3) walk more.",
            "12 34 56 78 and 90 more.",
            Context(
                "To give you a sense of the invitation, I'll offer you a special treat to make the occasion even more "
                "special. Here's a sample of a fun and creative invitation to your neighbourhood picnic: 1.11,234, "
                "18.40,10, 250,118,12, 18.21,15, 295.5,20, 295.5,24.",
                own_text=_INVITE,
            ),
        ),
        passes=(
            Context("Steps: 1. Mix. 2. Bake. 3. Serve.", own_text="List three steps to bake bread."),
            "Costs fell from 1.6 to 2.5 and then 3.4 million over the years since the plan began.",
            "Version 3.11.7 of the tool runs on the server at 10.0.0.1 today.",
            "Open 24/7 since 1999, at 3:30 pm on 5 May.",
            "The first primes are 2, 3, 5, 7, 11 and 13, and every one of them is odd but the first.",
            "Tickets cost 3.50 for children and 5.00 for adults, or 12.00 for a family of four.",
        ),
    ),
    Rule(
        "a numbered section",
        SECTION,
        "a section number heading the text or a sentence (“1.2.4 Tricks for…”), not a date, unless a list was"
        " asked for",
        one(section_heading),
        flags=(
            Context("1.1.1133 Tips for Studying Focus-The key to staying focused in study sessions.", own_text=_TIPS),
            Context("12.1.112 Tips for Staying Motivated at Work 1.1.112 Keep a morning routine.", own_text=_MOTIVATED),
            "Remember this: 1.2.1 Stay flexible and keep going.",
            "1.4.4 1.4.6 Italian pizza: a classic Italian comfort food made with flour.",
            Context("1.1 Stay focused on goals: Focus on what you want to achieve.", own_text=_MOTIVATED),
            Context(
                "1.21 Stay focused and productive during your work. 2.12 Set realistic goals.", own_text=_MOTIVATED
            ),
        ),
        passes=(
            "12.05.2024 Grand Opening at the Sweet Delights bakery!",
            "Version 3.11.7 of the tool runs on the server today.",
            "3.11.7 is out now, with faster startup.",
            "3.11.6 3.11.7 are out now, with faster startup.",
            "1.5 Million Reasons to Visit Portland This Summer.",
            "$1.99 Coffee All Week at the Corner Bakery!",
            "1.2 kilos of flour make two loaves.",
            "Our loaves weigh 1.1 Kilos. 1.2 Stars would be unfair.",
            Context("1.1.1 Mix the flour. 1.1.2 Bake it.", own_text="List the steps to bake bread."),
        ),
    ),
    Rule(
        "a blank",
        BLANK,
        "a template's blank left to fill in (“[Guest's Name]”, “{date}”), unless the writer wrote it",
        lambda c: blanks(c.text, c.own_text),
        flags=("Dear [Guest's Name], your room is ready.", "Hi {first_name}, your order ships today."),
        passes=(
            Context("Dear [Name], welcome aboard.", own_text="Write a welcome note that starts 'Dear [Name],'"),
            "Read [the guide](https://example.com) first.",
            "As shown before [1], sleep matters.",
        ),
    ),
    Rule(
        "a form",
        FORM,
        "a form's fields for someone to fill in (“Your Name: …, Your Location: …”) where the text should be",
        lambda c: form_fields(c.text, c.own_text),
        flags=(
            "Your Name: Sarah Emma Taylor, Your Category: Party Ideas, Your Location: 1354 West 26th.",
            "Your email: please type it here. Your phone number: and here.",
        ),
        passes=(
            "Your table: booked for two at 7 pm on Friday. See you then!",
            "Your name on every loaf: order a named sourdough today.",
            "Your address: we deliver to it for free on Saturdays.",
            Context(
                "Your Name: … Your Email: … Sign up for our picnic list.",
                own_text="Write a sign-up form for the picnic with name and email.",
            ),
            Context("Your Name: … Your Email: …", own_text="Write a sign-up form."),
        ),
    ),
    Rule(
        "a dangling end",
        DANGLING,
        "a last word no sentence ends on (“of”, “the”, “的”), or a lone letter after one (a word cut at a limit)",
        lambda c: [end] if (end := dangling_end(c.text, c.lang)) is not None else [],
        flags=(
            "The challenge is the.",
            "Stories of pride and",
            "Packin'ABikeRepaireter: The B.",
            Context("我们喜欢海边的。", "zh"),
        ),
        passes=("Plan B.", "Take your vitamin C.", "Let me do it.", Context("海边的书店开门了。", "zh")),
    ),
)
"""Every rule, in the order `warnings` lists what they find."""
