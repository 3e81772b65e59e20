"""Every page of the app, as an annotator and as the lead, over a store holding damaged
images (a stored file that is garbage, one replaced by a symbolic link out of the store), and
every hostile text typed into each of the app's forms or uploaded: no page shows a traceback,
an exception or a path of the server (issue 25). The rows are tables: a new page, form or
hostile input gets every row of the others."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from annotate.auth import ADMIN_PAGES, ANNOTATOR_PAGES
from curate.model import Label
from tests.support.apptest import all_text, form_keys, new_app, sign_in, submit

ROOT = Path(__file__).resolve().parents[1]
SECRET = "MMRB_DB=postgresql://mmrb:walk-secret@db.internal/mmrb"

# what an annotator or the lead may type into a text field
HOSTILE_TEXT = {
    "nul": "same\x00answer",
    "controls": "bell\x07 escape\x1b[31m red",  # (a lone surrogate cannot reach the app: the wire is UTF-8)
    "nested-json": "[" * 5000,
    "markup": "<script>alert(1)</script><img src=x onerror=alert(1)>",
    "bidi": "ali\u202ece",
    "long": "x" * 20_000,
    "nan": "NaN",
    "path": "../../../etc/passwd",
}
# what the lead may upload as a gold file (the Quality page)
HOSTILE_UPLOADS = {
    "nested.jsonl": b"[" * 100_000 + b"\n",
    "nul.jsonl": b'{"pair_id": "p1", "note": "a\\u0000b", "preference": "first"}\n',
    "repeated.csv": b"pair_id,preference,preference\np1,first,second\n",
    "nan.jsonl": b'{"pair_id": NaN, "preference": "first"}\n',
    "utf8.csv": b"pair_id,preference\np1,fir\xffst\n",
    "bom-empty.csv": b"\xef\xbb\xbf",
    "not-json.jsonl": b"{this is not json\n",
}


def shown(at) -> str:
    """Everything a page shows, its exceptions included."""
    return (
        all_text(at) + "\n" + "\n".join(str(e.value) for e in at.exception) + "\n".join(str(c.value) for c in at.code)
    )


def assert_clean(at, tmp_path: Path, where: str) -> None:
    text = shown(at)
    assert not at.exception, f"{where}: {at.exception}"
    assert "Traceback" not in text, where
    leaks = [p for p in (str(tmp_path), str(ROOT), "site-packages", "/usr/lib/python") if p in text]
    assert not leaks, f"{where} shows a server path: {leaks}"
    assert SECRET not in text and not re.search(r'File "[^"]+", line \d+', text), where


@pytest.fixture
def hostile_store(app_env, tmp_path):
    """The seeded store with a prompt image turned to garbage and another replaced by a link to
    a secret outside the store."""
    s = app_env
    secret = tmp_path / "outside" / "environ"
    secret.parent.mkdir()
    secret.write_text(SECRET)
    shas = [im.sha256 for pid in ("i0", "i3") for im in s.get_item(pid).images]
    garbage, linked = (s.image_path(sha) for sha in shas)
    garbage.write_bytes(b"not an image at all")
    linked.unlink()
    linked.symlink_to(secret)
    s.add_labels(  # a disagreement, so that the adjudication form is on its page
        [
            Label("p3", "alice", "correct", "correct", "first"),
            Label("p3", "bob", "correct", "correct", "second"),
        ]
    )
    return s


def pages_of(who: str) -> list[str]:
    return sorted(ANNOTATOR_PAGES if who == "alice" else ANNOTATOR_PAGES | ADMIN_PAGES)


@pytest.mark.parametrize("who", ["alice", "lead"])
def test_every_page_over_damaged_images_shows_no_traceback_or_path(hostile_store, tmp_path, who):
    at = sign_in(who)
    assert_clean(at, tmp_path, f"{who}: first page")
    for page in pages_of(who):
        at.switch_page(f"annotate/views/{page}.py").run()
        assert_clean(at, tmp_path, f"{who}: {page}")
        zoom = [b for b in at.button if b.key and ("zoom" in b.key or "Full size" in str(b.label)) and not b.disabled]
        for b in zoom[:2]:  # the full-size view of what is on the page
            b.click().run()
            assert_clean(at, tmp_path, f"{who}: {page}, full size")


@pytest.mark.parametrize("name", sorted(HOSTILE_TEXT))
def test_hostile_text_in_every_form(hostile_store, tmp_path, name):
    text = HOSTILE_TEXT[name]
    s = hostile_store
    # the sign-in form
    at = new_app().run()
    at.text_input(key="signin_name").input(text)
    at.text_input(key="signin_password").input(text)
    at.button[0].click().run()
    assert_clean(at, tmp_path, f"sign-in name {name}")
    # the label form's rationale
    at = sign_in("alice")
    k = form_keys(at)
    at.radio(key=k["q_left"]).set_value("correct")
    at.radio(key=k["q_right"]).set_value("correct")
    at.radio(key=k["q_pref"]).set_value("tie")
    at.text_area(key=k["q_rationale"]).input(text)
    submit(at)
    assert_clean(at, tmp_path, f"rationale {name}")
    saved = s.get_label("p0", "alice")
    assert saved is None or "\x00" not in (saved.rationale or "")
    # the lead's forms: a new account's name, an adjudication note
    lead = sign_in("lead")
    lead.switch_page("annotate/views/admin_annotators.py").run()
    accounts = len(s.annotators())
    lead.text_input[0].input(text)  # the new account's name, then its password
    lead.text_input[1].input("a-long-enough-password")
    next(b for b in lead.button if str(b.label) == "Add").click().run()
    assert_clean(lead, tmp_path, f"account name {name}")
    assert len(s.annotators()) == accounts + (name == "nan")  # "NaN" is a name; every other is refused
    lead.switch_page("annotate/views/admin_adjudicate.py").run()
    (note,) = [t for t in lead.text_area if t.key and t.key.startswith("adj_note_")]
    note.input(text)
    next(b for b in lead.button if b.key and b.key.startswith("adj_record_")).click().run()
    assert_clean(lead, tmp_path, f"adjudication note {name}")
    decided = s.adjudications().get("p3")
    assert decided is None or "\x00" not in (decided.note or "")


@pytest.mark.parametrize("filename", sorted(HOSTILE_UPLOADS))
def test_hostile_gold_uploads_on_the_quality_page(hostile_store, tmp_path, filename):
    before = hostile_store.gold()
    lead = sign_in("lead")
    lead.switch_page("annotate/views/admin_quality.py").run()
    assert_clean(lead, tmp_path, "quality page")
    lead.file_uploader(key="quality_gold_file").upload(filename, HOSTILE_UPLOADS[filename]).run()
    lead.button(key="quality_gold_import").click().run()
    assert_clean(lead, tmp_path, f"upload {filename}")
    text = shown(lead)
    assert filename in text and ("nothing written" in text or "problem" in text), text[-800:]
    assert hostile_store.gold() == before
