"""The Label Studio labeling config for one pair, and the map between its results and a Label.

One config serves every project: the image (zoomable), the prompt, responses A (left) and
B (right) side by side with the correctness of each under it, the preference A / B / tie,
a rationale and an optional flag with a note. Every choice has a hotkey. ``CONTROLS`` is the
contract with ``pull``: a project whose controls no longer match it was edited by hand.

Responses with images: ``labeling_config(response_images=True)`` adds, above each
response's text, a ``Repeater`` over the task field ``response_a_images`` (``_b``): one
entry per image, ``{"text": the text before it, "image": its URL}``, shown as a ``Text``
and a zoomable ``Image`` object; ``response_a`` then holds the text after the last image,
so an interleaved response reads in order. The controls are the same in both configs, so
a project can move to the image config when its first pair with response images is pushed.
"""

from __future__ import annotations

from dataclasses import dataclass
from xml.sax.saxutils import quoteattr

from curate.extras import require_extra
from curate.model import (
    CORRECTNESS,
    FLAG_REASONS,
    SCREEN_PREFERENCES,
    Correctness,
    FlagReason,
    ScreenPreference,
)
from curate.schemes import Scheme, SchemeField
from curate.sides import preference_from_screen

# choice value shown in Label Studio (the projects' published names) -> canonical vocabulary
# of curate.model, each checked below against it
CORRECTNESS_CHOICES: dict[str, Correctness] = {"Correct": "correct", "Incorrect": "incorrect", "Unsure": "unsure"}
# screen sides, mapped to first/second on pull (curate/sides.py)
PREFERENCE_CHOICES: dict[str, ScreenPreference] = {"A": "left", "B": "right", "Tie": "tie"}
FLAG_CHOICES: dict[str, FlagReason] = {
    "Broken image": "broken_image",
    "Unsafe content": "unsafe_content",
    "Unclear prompt": "unclear_prompt",
    "Other": "other",
}
assert set(CORRECTNESS_CHOICES.values()) == set(CORRECTNESS)
assert set(PREFERENCE_CHOICES.values()) == set(SCREEN_PREFERENCES)
assert set(FLAG_CHOICES.values()) == set(FLAG_REASONS)

HOTKEYS = {
    "correct_a": ("1", "2", "3"),
    "correct_b": ("4", "5", "6"),
    "preference": ("a", "b", "t"),
    "flag": ("7", "8", "9", "0"),
}

# The task data fields the config with response images reads besides image, prompt,
# response_a and response_b (lists, one entry per image)
IMAGE_FIELDS = {"response_a": "response_a_images", "response_b": "response_b_images"}


@dataclass(frozen=True)
class Control:
    name: str
    tag: str  # Label Studio tag name
    result_type: str  # the ``type`` of its results in an annotation
    to_name: str
    choices: tuple[str, ...] = ()
    points: int = 0  # a Rating's maxRating


CONTROLS: dict[str, Control] = {
    c.name: c
    for c in (
        Control("correct_a", "Choices", "choices", "response_a", tuple(CORRECTNESS_CHOICES)),
        Control("correct_b", "Choices", "choices", "response_b", tuple(CORRECTNESS_CHOICES)),
        Control("preference", "Choices", "choices", "prompt", tuple(PREFERENCE_CHOICES)),
        Control("rationale", "TextArea", "textarea", "prompt"),
        Control("flag", "Choices", "choices", "prompt", tuple(FLAG_CHOICES)),
        Control("flag_note", "TextArea", "textarea", "prompt"),
    )
}

_STYLE = """
  .mmrb-cols { display: flex; gap: 1.5em; align-items: flex-start; }
  .mmrb-col { flex: 1 1 0; min-width: 0; border: 1px solid #ddd; border-radius: 6px; padding: 0.5em 1em; }
  .mmrb-col .lsf-richtext, .mmrb-col .htx-richtext { white-space: pre-wrap; }
"""


def _choices(name: str, *, required: bool, hint: dict[str, str] | None = None) -> str:
    c = CONTROLS[name]
    req = ' required="true"' if required else ""
    lines = [f'<Choices name="{name}" toName="{c.to_name}" choice="single" showInline="true"{req}>']
    for value, key in zip(c.choices, HOTKEYS[name], strict=True):
        h = f" hint={quoteattr(hint[value])}" if hint and value in hint else ""
        lines.append(f"  <Choice value={quoteattr(value)} hotkey={quoteattr(key)}{h}/>")
    lines.append("</Choices>")
    return "\n".join(lines)


_IMAGE_ATTRS = 'zoom="true" zoomControl="true" rotateControl="false" maxWidth="100%"'


def _response_images(field: str) -> list[str]:
    """A response's images in order, each after the text that precedes it (Repeater)."""
    images = IMAGE_FIELDS[field]
    return [
        f'<Repeater on="${images}" indexFlag="{{{{idx}}}}">',
        f'  <Text name="{field}_text_{{{{idx}}}}" value="${images}[{{{{idx}}}}].text"/>',
        f'  <Image name="{field}_image_{{{{idx}}}}" value="${images}[{{{{idx}}}}].image" {_IMAGE_ATTRS}/>',
        "</Repeater>",
    ]


def has_response_images(xml: str) -> bool:
    """Whether a project's config shows response images (made by ``labeling_config(response_images=True)``)."""
    return all(f'on="${f}"' in xml for f in IMAGE_FIELDS.values())


def labeling_config(*, response_images: bool = False) -> str:
    """The XML labeling config (deterministic: the same text on every call); with
    ``response_images``, each response shows its images in order with its text."""

    def indent(block: str, n: int) -> str:
        return "\n".join(" " * n + line for line in block.splitlines())

    def response(field: str) -> list[str]:
        shown = _response_images(field) if response_images else []
        return [indent(line, 6) for line in shown] + [f'      <Text name="{field}" value="${field}"/>']

    parts = [
        "<View>",
        f"  <Style>{_STYLE}  </Style>",
        '  <Header value="Prompt"/>',
        f'  <Image name="image" value="$image" {_IMAGE_ATTRS}/>',
        '  <Text name="prompt" value="$prompt"/>',
        '  <View className="mmrb-cols">',
        '    <View className="mmrb-col">',
        '      <Header value="Response A"/>',
        *response("response_a"),
        '      <Header value="Is A correct?" size="5"/>',
        indent(_choices("correct_a", required=True), 6),
        "    </View>",
        '    <View className="mmrb-col">',
        '      <Header value="Response B"/>',
        *response("response_b"),
        '      <Header value="Is B correct?" size="5"/>',
        indent(_choices("correct_b", required=True), 6),
        "    </View>",
        "  </View>",
        '  <Header value="Which response is better?"/>',
        indent(
            _choices(
                "preference",
                required=True,
                hint={"A": "A (left) is better", "B": "B (right) is better", "Tie": "equally good or equally bad"},
            ),
            2,
        ),
        '  <Header value="Rationale"/>',
        '  <TextArea name="rationale" toName="prompt" rows="3" maxSubmissions="1" editable="true"'
        ' placeholder="Why? (one or two sentences)"/>',
        '  <Header value="Flag this pair (optional)" size="5"/>',
        indent(_choices("flag", required=False), 2),
        '  <TextArea name="flag_note" toName="prompt" rows="1" maxSubmissions="1" editable="true"'
        ' placeholder="What is wrong? (only with a flag)"/>',
        "</View>",
    ]
    return "\n".join(parts) + "\n"


def config_problems(xml: str, scheme: Scheme | None = None) -> list[str]:
    """How a project's config differs from the controls of ``scheme`` (None: mmrb's,
    ``CONTROLS``) in ways that break pulling.

    Cosmetic edits (style, headers, hints, hotkeys) are fine; a renamed or removed control, a
    changed tag type, a changed choice set or a Rating's number of points is not.
    """
    require_extra("labelstudio", "checking a Label Studio config")
    # deferred: 0.6 s to import, and only the check of a config needs it
    from label_studio_sdk.label_interface import LabelInterface

    try:
        li = LabelInterface(xml)
    except Exception as e:  # lxml or LS parse errors
        return [f"the labeling config cannot be parsed ({e})"]
    problems = []
    controls = controls_of(scheme)
    have = {c.name: c for c in li.controls}
    for name, want in controls.items():
        got = have.get(name)
        if got is None:
            problems.append(f"control '{name}' is missing")
            continue
        if got.tag != want.tag:
            problems.append(f"control '{name}' is a {got.tag}, expected {want.tag}")
            continue
        if want.choices and tuple(got.labels) != want.choices:
            problems.append(f"control '{name}' has choices {list(got.labels)}, expected {list(want.choices)}")
        if want.points and str(got.attr.get("maxRating")) != str(want.points):
            problems.append(f"control '{name}' has {got.attr.get('maxRating')} points, expected {want.points}")
    for name in sorted(set(have) - set(controls)):
        problems.append(f"control '{name}' was added")
    objects = {o.name for o in li.objects}
    shown = ("proposal",) if scheme is not None and scheme.shows_proposal else ()
    for field in ("image", "prompt", "response_a", "response_b", *shown):
        if field not in objects:
            problems.append(f"object '{field}' is missing")
    return problems


# -- a scheme's config (curate/schemes.py) ----------------------------------------------------
# The mmrb scheme is ``labeling_config`` itself: the projects made before schemes keep theirs.
# Other schemes get their fields as Label Studio controls: a choice as Choices (a side-naming
# one as A / Tie / B), a scale as Choices of its labelled points, a scale per response as a
# Rating under each response, grades and choices per response as Choices under each, a
# multi-select as multiple Choices, a text as a TextArea. A field required only when another
# field has some value is shown only then (visibleWhen), as required: Label Studio checks a
# control only while it is shown (whenChoiceValue takes several values, comma-separated).
# The verify scheme shows the task's "proposal" field above its controls.
# a side-naming value as the config's choice: the published A / B / Tie of the side it names
# in the pair's own order (A is left: PREFERENCE_CHOICES)
SIDE_CHOICES: dict[str, str] = {
    str(preference_from_screen(screen, "first")): choice for choice, screen in PREFERENCE_CHOICES.items()
}


def scheme_controls(scheme: Scheme) -> dict[str, Control]:
    """The controls of a scheme's config, by name (a per-response field: NAME_a and NAME_b)."""
    out: dict[str, Control] = {}
    for f in scheme.fields:
        if f.per_response:
            for side, to in (("a", "response_a"), ("b", "response_b")):
                tag = "Rating" if f.kind == "scale_per_response" else "Choices"
                points = len(f.points) if tag == "Rating" else 0
                out[f"{f.name}_{side}"] = Control(f"{f.name}_{side}", tag, tag.lower(), to, _labels(f), points)
        elif f.kind == "text":
            out[f.name] = Control(f.name, "TextArea", "textarea", "prompt")
        else:
            out[f.name] = Control(f.name, "Choices", "choices", "prompt", _labels(f))
    for name in ("flag", "flag_note"):  # flagging is the page's own, in every scheme
        out[name] = CONTROLS[name]
    return out


def controls_of(scheme: Scheme | None) -> dict[str, Control]:
    """The controls a project's config of ``scheme`` has (None or mmrb: ``CONTROLS``, the
    config made before schemes)."""
    return CONTROLS if scheme is None or scheme.name == "mmrb" else scheme_controls(scheme)


def _labels(f: SchemeField) -> tuple[str, ...]:
    if f.kind == "scale_per_response":
        return ()  # a Rating: its points are 1..maxRating
    if f.kind == "scale":
        return tuple(f"{f.low + i} {p}" for i, p in enumerate(f.points))
    if f.sides:
        return tuple(SIDE_CHOICES[v] for v in f.values)
    return f.values


def scheme_config(scheme: Scheme, *, response_images: bool = False) -> str:
    """The XML labeling config of a scheme (deterministic)."""
    if scheme.name == "mmrb":
        return labeling_config(response_images=response_images)
    controls = scheme_controls(scheme)

    def control(f: SchemeField, name: str, keys: tuple[str, ...], pad: int) -> list[str]:
        c = controls[name]
        attrs = f'name="{name}" toName="{c.to_name}"'
        when = f.required_when.conditions if f.required_when else ()
        # a condition on one whole-pair choice is a visibleWhen; any other (several fields, a
        # per-response one) Label Studio cannot say, so the field is optional there
        shown_when = len(when) == 1 and when[0][0] in controls and controls[when[0][0]].tag == "Choices"
        if shown_when or (f.required and f.required_when is None):
            attrs += ' required="true"'
        if shown_when:
            other, values = when[0]
            shown = ",".join(_shown(scheme, other, v) for v in values)
            attrs += f' visibleWhen="choice-selected" whenTagName="{other}" whenChoiceValue={quoteattr(shown)}'
        ind = " " * pad
        if c.tag == "TextArea":
            return [f'{ind}<TextArea {attrs} rows="3" maxSubmissions="1" editable="true"/>']
        if c.tag == "Rating":
            return [f'{ind}<Rating {attrs} maxRating="{len(f.points)}" icon="star" size="medium"/>']
        many = ' choice="multiple"' if f.kind == "multi" else ' choice="single"'
        lines = [f'{ind}<Choices {attrs}{many} showInline="true">']
        for i, value in enumerate(c.choices):
            hot = f" hotkey={quoteattr(keys[i])}" if i < len(keys) else ""
            lines.append(f"{ind}  <Choice value={quoteattr(value)}{hot}/>")
        return [*lines, f"{ind}</Choices>"]

    def response(field: str, side: str) -> list[str]:
        shown = [" " * 6 + line for line in _response_images(field)] if response_images else []
        lines = [*shown, f'      <Text name="{field}" value="${field}"/>']
        for f in scheme.fields:
            if f.per_response:
                half = len(f.keys) // 2
                keys = f.keys[:half] if side == "a" else f.keys[half:]
                lines += [
                    f'      <Header value={quoteattr(f.title)} size="5"/>',
                    *control(f, f"{f.name}_{side}", keys, 6),
                ]
        return lines

    parts = [
        "<View>",
        f"  <Style>{_STYLE}  </Style>",
        f"  <Header value={quoteattr(scheme.title)}/>",
        f'  <Image name="image" value="$image" {_IMAGE_ATTRS}/>',
        '  <Text name="prompt" value="$prompt"/>',
        '  <View className="mmrb-cols">',
        '    <View className="mmrb-col">',
        '      <Header value="Response A"/>',
        *response("response_a", "a"),
        "    </View>",
        '    <View className="mmrb-col">',
        '      <Header value="Response B"/>',
        *response("response_b", "b"),
        "    </View>",
        "  </View>",
    ]
    if scheme.shows_proposal:  # the task's "proposal": the judges' preference, A, B or Tie
        parts += ['  <Header value="The judges\' proposal"/>', '  <Text name="proposal" value="$proposal"/>']
    for f in scheme.fields:
        if not f.per_response:
            parts += [f"  <Header value={quoteattr(f.title)}/>", *control(f, f.name, f.keys, 2)]
    parts += [
        '  <Header value="Flag this pair (optional)" size="5"/>',
        # without hotkeys: a scheme's fields may use every digit
        '  <Choices name="flag" toName="prompt" choice="single" showInline="true">',
        *(f"    <Choice value={quoteattr(v)}/>" for v in FLAG_CHOICES),
        "  </Choices>",
        '  <TextArea name="flag_note" toName="prompt" rows="1" maxSubmissions="1" editable="true"'
        ' placeholder="What is wrong? (only with a flag)"/>',
        "</View>",
    ]
    return "\n".join(parts) + "\n"


def _shown(scheme: Scheme, field: str, value: str) -> str:
    """A stored value as the config's choice shows it."""
    f = scheme.field(field)
    return SIDE_CHOICES.get(value, value) if f.sides else value
