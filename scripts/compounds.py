"""Build capel_ui/data/scowl/compounds.txt: the words `lexicon.looks_glued` would take for two words run together
("soup" = "so" + "up", "teamwork", "onto") that a spelling dictionary lists as words.

    apt-get download wamerican && dpkg-deb -x wamerican_*.deb /tmp/wam
    .venv/bin/python scripts/compounds.py /tmp/wam/usr/share/dict/american-english

The dictionary is SCOWL's (Debian's `wamerican`, size 50, American spelling): it lists "soup", "noon" and "teamwork"
and none of the typos web text puts among wordfreq's frequent words ("ofthe", "alot", "everytime", "thankyou").
Only the words of wordfreq's 60,000 most frequent that look glued are kept, so the file stays small.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from wordfreq import top_n_list

from capel_ui.lexicon import COMPOUNDS_FILE, looks_glued

FREQUENT = 60_000


def main(dictionary: Path) -> None:
    listed = {w for w in dictionary.read_text(encoding="utf-8").split() if w.isalpha() and w.islower()}
    frequent = [w for w in top_n_list("en", FREQUENT) if w.isalpha()]
    kept = sorted(w for w in frequent if w in listed and looks_glued(w, compounds=False))
    COMPOUNDS_FILE.write_text("\n".join(kept) + "\n", encoding="utf-8")
    print(f"{len(kept)} words to {COMPOUNDS_FILE}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
