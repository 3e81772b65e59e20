"""The labeling config and the result <-> Label mapping (no server needed)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st
from label_studio_sdk.label_interface import LabelInterface

from annotate.labelstudio.config import (
    CONTROLS,
    CORRECTNESS_CHOICES,
    FLAG_CHOICES,
    PREFERENCE_CHOICES,
    config_problems,
    labeling_config,
)
from annotate.labelstudio.pull import convert
from annotate.labelstudio.push import left_side


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
