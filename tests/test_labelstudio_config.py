"""The labeling config, the task JSON and the result <-> Label mapping (no server needed)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from label_studio_sdk.label_interface import LabelInterface

from annotate.labelstudio.config import (
    CONTROLS,
    CORRECTNESS_CHOICES,
    FLAG_CHOICES,
    PREFERENCE_CHOICES,
    config_problems,
    has_response_images,
    labeling_config,
    scheme_config,
    scheme_controls,
)
from annotate.labelstudio.pull import convert
from annotate.labelstudio.push import build_tasks, left_side, response_fields
from curate.model import Candidate, ImageRef, Item, Pair, Part, render_parts
from curate.schemes import BUILT_IN
from tests.ingest_helpers import png


def test_config_validates_with_label_interface():
    xml = labeling_config()
    li = LabelInterface(xml)
    li.validate()  # raises on an invalid config
    assert {c.name: (c.tag, tuple(c.labels)) for c in li.controls} == {
        n: (c.tag, c.choices) for n, c in CONTROLS.items()
    }
    assert {o.name for o in li.objects} == {"image", "prompt", "response_a", "response_b"}
    assert config_problems(xml) == []
    assert labeling_config() == xml  # deterministic
    assert 'zoom="true"' in xml and 'zoomControl="true"' in xml


def test_every_choice_has_its_own_hotkey():
    xml = labeling_config()
    choices = re.findall(r"<Choice [^>]*>", xml)
    n_choices = sum(len(c.choices) for c in CONTROLS.values())
    assert len(choices) == n_choices == 13
    keys = [re.search(r'hotkey="([^"]+)"', c).group(1) for c in choices]
    assert len(set(keys)) == len(keys)


def test_config_problems_name_what_was_changed_by_hand():
    xml = labeling_config()
    renamed = xml.replace('<Choice value="Tie"', '<Choice value="Equal"')
    assert config_problems(renamed) == [
        "control 'preference' has choices ['A', 'B', 'Equal'], expected ['A', 'B', 'Tie']"
    ]
    dropped = re.sub(r'\s*<TextArea name="rationale"[^>]*/>', "", xml)
    assert config_problems(dropped) == ["control 'rationale' is missing"]
    added = xml.replace("</View>\n", '<Rating name="stars" toName="prompt"/></View>\n')
    assert config_problems(added[: added.rfind("</View>")] + "</View>\n") == ["control 'stars' was added"]
    assert config_problems("<View><Text") and "cannot be parsed" in config_problems("<View><Text")[0]
    # cosmetic edits are fine
    assert config_problems(xml.replace('hotkey="t"', 'hotkey="y"').replace("Rationale", "Why?")) == []


def test_left_side_is_seeded_and_balanced():
    sides = [left_side(f"pair-{n}") for n in range(400)]
    assert sides == [left_side(f"pair-{n}") for n in range(400)]
    assert 160 < sides.count("first") < 240
    assert sides != [left_side(f"pair-{n}", seed=1) for n in range(400)]


def _task(left):
    a, b = ("c1", "c2") if left == "first" else ("c2", "c1")
    return {"id": 7, "data": {"pair_id": "p", "left": left, "left_id": a, "right_id": b}}


def _as_seen(left, cf, cs, pref):
    """The result an annotator produces for canonical answers, given the sides shown."""
    inv_c = {v: k for k, v in CORRECTNESS_CHOICES.items()}
    a_is = left
    ca, cb = (cf, cs) if a_is == "first" else (cs, cf)
    if pref == "tie":
        p = "Tie"
    else:
        p = "A" if pref == a_is else "B"
    res = []
    if ca:
        res.append(
            {"from_name": "correct_a", "to_name": "response_a", "type": "choices", "value": {"choices": [inv_c[ca]]}}
        )
    if cb:
        res.append(
            {"from_name": "correct_b", "to_name": "response_b", "type": "choices", "value": {"choices": [inv_c[cb]]}}
        )
    if pref:
        # to_name deliberately odd: the UI and the SDK disagree on it, parsing must not care
        res.append({"from_name": "preference", "to_name": "response_a", "type": "choices", "value": {"choices": [p]}})
    return res


opt_c = st.sampled_from([None, *CORRECTNESS_CHOICES.values()])


@given(st.sampled_from(["first", "second"]), opt_c, opt_c, st.sampled_from([None, "first", "second", "tie"]))
def test_sides_map_back_to_canonical(left, cf, cs, pref):
    ann = {"id": 1, "result": _as_seen(left, cf, cs, pref), "lead_time": 2.5, "updated_at": "2026-01-02T03:04:05.123Z"}
    label, problems = convert(ann, _task(left), "ann", "here")
    assert problems == []
    assert (label.correctness_first, label.correctness_second, label.preference) == (cf, cs, pref)
    assert label.seconds == 2.5 and label.source == "labelstudio"
    assert label.updated_at == "2026-01-02T03:04:05.123000+00:00"


def test_text_and_flag_results():
    res = [
        {"from_name": "rationale", "type": "textarea", "value": {"text": ["A reads the axis", "B does not"]}},
        {"from_name": "flag", "type": "choices", "value": {"choices": ["Unclear prompt"]}},
        {"from_name": "flag_note", "type": "textarea", "value": {"text": ["which chart?"]}},
    ]
    label, problems = convert({"result": res}, _task("second"), "ann", "here")
    assert problems == []
    assert label.rationale == "A reads the axis\nB does not"
    assert label.flag == "unclear_prompt" and label.flag_note == "which chart?"
    assert set(FLAG_CHOICES.values()) >= {label.flag} and set(PREFERENCE_CHOICES) == {"A", "B", "Tie"}


def test_unexpected_results_are_problems_not_labels():
    bad = [
        {"from_name": "mood", "type": "choices", "value": {"choices": ["happy"]}},
        {"from_name": "preference", "type": "textarea", "value": {"text": ["A"]}},
        {"from_name": "correct_a", "type": "choices", "value": {"choices": ["Maybe"]}},
        {"from_name": "correct_b", "type": "choices", "value": {"choices": ["Correct", "Incorrect"]}},
        {"from_name": "rationale", "type": "textarea", "value": {"text": 3}},
    ]
    label, problems = convert({"result": bad}, _task("first"), "ann", "task 7")
    assert label is None
    assert len(problems) == 5
    assert "unexpected from_name 'mood'" in problems[0]
    assert "type 'textarea', expected 'choices'" in problems[1]
    assert "'Maybe'" in problems[2] and "expected one of" in problems[3]
    assert all(p.startswith("task 7") for p in problems)


# -- responses with images ---------------------------------------------------------------
def test_image_config_adds_image_objects_and_keeps_the_controls():
    plain, xml = labeling_config(), labeling_config(response_images=True)
    li = LabelInterface(xml)
    li.validate()
    assert {c.name: (c.tag, tuple(c.labels)) for c in li.controls} == {
        n: (c.tag, c.choices) for n, c in CONTROLS.items()
    }
    objects = {o.name: (o.tag, o.value) for o in li.objects}
    for side in ("a", "b"):
        assert objects[f"response_{side}_image_{{{{idx}}}}"] == ("Image", f"$response_{side}_images[{{{{idx}}}}].image")
        assert objects[f"response_{side}_text_{{{{idx}}}}"] == ("Text", f"$response_{side}_images[{{{{idx}}}}].text")
    assert config_problems(xml) == [] and labeling_config(response_images=True) == xml
    assert has_response_images(xml) and not has_response_images(plain)
    # the images of A come before A's text after them, and all of A before B (left, right)
    order = [
        xml.index(s) for s in ('on="$response_a_images"', '"$response_a"', 'on="$response_b_images"', '"$response_b"')
    ]
    assert order == sorted(order)
    # without the two Repeater blocks it is the plain config, line for line
    assert re.sub(r"\n *<Repeater .*?</Repeater>", "", xml, flags=re.S) == plain
    assert xml.count("<Image ") == 3 and xml.count('zoom="true"') == 3


def _img(sha: str, source: str = "x.png", status="ok") -> Part:
    return Part.of_image(ImageRef(source, sha if status == "ok" else None, status))


def _cand(cid: str, *parts) -> Candidate:
    content = tuple(Part.of_text(p) if isinstance(p, str) else p for p in parts)
    item, _, model = cid.partition("/")
    return Candidate(cid, item, model, render_parts(content), content=content)


def test_response_fields_keep_the_order_of_text_and_images():
    plain = Candidate("c", "i", "m", "  two lines\nkept as they are ")
    assert response_fields(plain, set()) == ([], "  two lines\nkept as they are ", 0)
    mixed = _cand("c", "Here is the chart:", _img("s1"), "  then ", _img("s2"), _img("s1"), "Done.")
    assert response_fields(mixed, {"s1", "s2"}) == (
        [{"text": "Here is the chart:", "image": "s1"}, {"text": "then", "image": "s2"}, {"text": "", "image": "s1"}],
        "Done.",
        0,
    )
    gone = _cand("c", _img("", "gone.png", status="missing"), "Words.", _img("s3", "lost.png"), _img("s1"))
    assert response_fields(gone, {"s1"}) == (
        [{"text": "[image not available: gone.png]\n\nWords.\n\n[image not available: lost.png]", "image": "s1"}],
        "",
        2,
    )


part = st.one_of(
    st.text(alphabet="ab \n", max_size=4).map(Part.of_text),
    st.sampled_from(["s1", "s2", "s9"]).map(_img),  # s9: not usable
)


@given(st.lists(part, min_size=1, max_size=8))
def test_response_fields_read_back_as_the_parts(parts):
    usable = {"s1", "s2"}
    entries, tail, missing = response_fields(_cand("c", *parts), usable)

    def token(p):
        if p.kind == "text":
            return p.text.strip()
        return f"<{p.image.sha256}>" if p.image.sha256 in usable else f"[image not available: {p.image.source}]"

    shown = [t for e in entries for t in (e["text"], f"<{e['image']}>")] + [tail]
    assert "\n\n".join(t for t in shown if t) == "\n\n".join(t for t in map(token, parts) if t)
    assert missing == sum(p.kind == "image" and p.image.sha256 not in usable for p in parts)


def _pair_id(left: str) -> str:
    return next(f"p{n}" for n in range(100) if left_side(f"p{n}") == left)


def test_task_json_with_response_images(sqlite_store):
    s = sqlite_store
    red, blue = (s.images.put(png(c)) for c in ("red", "blue"))
    s.add_images([red, blue])
    ref = {c: ImageRef(f"{c}.png", x.sha256, "ok", x.width, x.height) for c, x in (("red", red), ("blue", blue))}
    s.add_items([Item("i1", "Draw it.", "gen"), Item("i2", "Say hi.", "vqa")])
    s.add_candidates(
        [
            _cand("i1/a", "Here:", Part.of_image(ref["red"]), "Sorted."),
            _cand("i1/b", Part.of_image(ref["blue"]), Part.of_image(ImageRef("gone.png", None, "missing"))),
            Candidate("i2/a", "i2", "a", "Hi."),
            Candidate("i2/b", "i2", "b", "Hello."),
        ]
    )
    second, first = _pair_id("second"), _pair_id("first")
    s.add_pairs([Pair(second, "i1", "i1/a", "i1/b", "t"), Pair(first, "i2", "i2/a", "i2/b", "t")])
    pairs = s.pairs(ids=[second, first])

    tasks, files, warnings = build_tasks(s, pairs, 0)
    by = {t["data"]["pair_id"]: t["data"] for t in tasks}
    common = {"image": "", "item_id": "i1", "category": "gen", "prompt": "Draw it."}
    # shown with the second response (i1/b) on the left: its images are A's
    assert by[second] == {
        "pair_id": second,
        "left": "second",
        "left_id": "i1/b",
        "right_id": "i1/a",
        **common,
        "response_a": "[image not available: gone.png]",
        "response_b": "Sorted.",
        "response_a_images": [{"text": "", "image": blue.sha256}],
        "response_b_images": [{"text": "Here:", "image": red.sha256}],
    }
    assert list(by[second]) == [*by[first]]  # the same fields in the same order
    # a plain-text pair among them: its text as before, no images
    assert (by[first]["response_a"], by[first]["response_b"]) == ("Hi.", "Hello.")
    assert by[first]["response_a_images"] == by[first]["response_b_images"] == []
    assert files == {red.sha256: s.image_path(red.sha256), blue.sha256: s.image_path(blue.sha256)}
    assert warnings == [
        "1 pair has response images missing or corrupt at ingest: each shows as a marker in the response text"
    ]

    # plain-text pairs alone: the tasks of the plain config, exactly
    (plain,), files, warnings = build_tasks(s, [p for p in pairs if p.id == first], 0)
    assert plain == {
        "data": {
            "pair_id": first,
            "left": "first",
            "left_id": "i2/a",
            "right_id": "i2/b",
            "item_id": "i2",
            "category": "vqa",
            "image": "",
            "prompt": "Say hi.",
            "response_a": "Hi.",
            "response_b": "Hello.",
        }
    }
    assert (files, warnings) == ({}, [])
    # ... unless the project already shows response images: then with empty lists
    (again,), _, _ = build_tasks(s, [p for p in pairs if p.id == first], 0, response_images=True)
    assert again["data"] == {**plain["data"], "response_a_images": [], "response_b_images": []}


# -- a scheme's config (curate/schemes.py) ----------------------------------------------------
GOLDEN_CONFIGS = Path(__file__).parent / "golden" / "labelstudio"


@pytest.mark.parametrize("name", sorted(BUILT_IN))
def test_each_built_in_scheme_has_a_config_label_studio_parses_with_its_controls(name):
    """Golden files (tests/golden/labelstudio/NAME.xml; MMRB_UPDATE_GOLDEN=1 rewrites them)."""
    scheme = BUILT_IN[name]
    xml = scheme_config(scheme)
    golden = GOLDEN_CONFIGS / f"{name}.xml"
    if os.environ.get("MMRB_UPDATE_GOLDEN") == "1":
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(xml)
    assert xml == golden.read_text() and xml == scheme_config(scheme)
    li = LabelInterface(xml)
    have = {c.name: c for c in li.controls}
    want = scheme_controls(scheme) if name != "mmrb" else CONTROLS
    assert set(have) == set(want)
    for c in want.values():
        assert have[c.name].tag == c.tag and tuple(have[c.name].labels or ()) == c.choices
    hotkeys = re.findall(r'hotkey="([^"]+)"', xml)
    assert len(hotkeys) == len(set(hotkeys))  # no key twice
    if name != "mmrb":  # the scheme's own keys (the mmrb projects keep their published ones)
        assert set(hotkeys) <= set(scheme.keys)


def test_a_field_required_only_sometimes_is_shown_only_then():
    xml = scheme_config(BUILT_IN["verify"])
    corrected = re.search(r"<Choices name=\"corrected\"[^>]*>", xml).group(0)
    assert 'required="true"' in corrected and 'whenTagName="verdict"' in corrected
    assert 'whenChoiceValue="disagree"' in corrected
    block = xml.split(corrected)[1].split("</Choices>")[0]
    assert re.findall(r'<Choice value="([^"]+)"', block) == ["A", "Tie", "B"]  # first, tie, second on screen
    pairwise = scheme_config(BUILT_IN["mmrb2-pairwise"])
    assert '<Choice value="1 right much better" hotkey="1"/>' in pairwise
    assert '<Choice value="6 left much better" hotkey="6"/>' in pairwise
    aspects = scheme_config(BUILT_IN["aspects"])
    assert aspects.count('<Rating name="helpfulness_') == 2 and 'maxRating="4"' in aspects


def test_mmrb_labelstudio_config_prints_a_schemes_config(capsys, tmp_path):
    from curate.cli import main

    assert main(["labelstudio", "config", "--scheme", "mmrb2-pairwise"]) == 0
    assert capsys.readouterr().out == (GOLDEN_CONFIGS / "mmrb2-pairwise.xml").read_text()
    assert main(["labelstudio", "config"]) == 0
    assert capsys.readouterr().out == labeling_config()
    assert main(["labelstudio", "config", "--scheme", str(tmp_path / "gone.toml")]) == 1
    assert "scheme not found" in capsys.readouterr().err


def test_a_condition_label_studio_cannot_say_leaves_the_field_optional_there():
    from curate.schemes import from_table

    two = from_table(
        {
            "name": "two",
            "field": [
                {"name": "ok", "kind": "choice_per_response", "values": ["yes", "no"]},
                {"name": "pick", "kind": "choice", "values": ["x", "y"]},
                {"name": "why", "kind": "text", "required_when": {"ok": ["no"], "pick": ["y"]}},
            ],
        }
    )
    why = re.search(r'<TextArea name="why"[^>]*>', scheme_config(two)).group(0)
    assert "required" not in why and "visibleWhen" not in why
    LabelInterface(scheme_config(two)).validate()
