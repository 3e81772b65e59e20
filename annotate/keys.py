"""Keyboard maps of the label page and the adjudication page, and the small script that
makes them work.

Streamlit's own button shortcuts do not fire while focus sits on a radio option (which is
where focus is after a click), so one capture-phase listener on the document handles every
key, whatever has focus, and ignores keys typed into a text box. Each map acts inside its
own container (found by its key's class); R and C stay Streamlit's (rerun, clear cache).
The same script keeps the two frames of the full-size view's side by side scrolled alike.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from curate.schemes import Scheme

from .scheme_form import choices, option_title

# key -> (widget key prefix, option index) for radios, or (button/checkbox key prefix, None)
KEYS: dict[str, tuple[str, int | None]] = {
    "1": ("q_left", 0),
    "2": ("q_left", 1),
    "3": ("q_left", 2),
    "8": ("q_right", 0),
    "9": ("q_right", 1),
    "0": ("q_right", 2),
    "a": ("q_pref", 0),
    "t": ("q_pref", 1),
    "d": ("q_pref", 2),
    "Enter": ("q_submit", None),
    "s": ("act_skip", None),
    "u": ("act_undo", None),
    "z": ("act_zoom", None),
    "v": ("act_flip", None),  # the full-size view opened on the flip; inside it, DIALOG_KEYS
}
CYCLE = {"f": "q_flag"}  # moves to the next option, wrapping
FOCUS = {"e": "q_rationale"}
# Keys of the full-size view (a dialog, where the page's keys are off): V flips between the
# two responses' images in one place (the view's checkbox), or switches the view to the flip.
# On the label page V opens the view on the flip (KEYS), so V, V, V... flips from the page.
FLIP = "v"
DIALOG_KEYS = {FLIP: (".mmrb-flip-toggle", "zoom_view", 1)}

LEGEND = (
    "`1` `2` `3` left correct / incorrect / unsure · `8` `9` `0` right correct / incorrect / unsure · "
    "`A` left better · `T` tie · `D` right better · `E` write rationale (`Esc` leaves it) · `F` flag · "
    "`Enter` submit (`Ctrl+Enter` from the rationale) · `S` skip · `U` undo last · `Z` full-size image · "
    "`V` flips the responses' images left / right in one place, full size (`Esc` closes)"
)

ADJ_KEYS: dict[str, tuple[str, int | None]] = {
    "1": ("adj_first", 1),
    "2": ("adj_first", 2),
    "3": ("adj_first", 3),
    "8": ("adj_second", 1),
    "9": ("adj_second", 2),
    "0": ("adj_second", 3),
    "a": ("adj_pref", 0),
    "t": ("adj_pref", 1),
    "d": ("adj_pref", 2),
    "x": ("adj_exclude", None),
    "Enter": ("adj_record", None),
    "n": ("adj_next", None),
    "z": ("adj_zoom", None),
}
ADJ_LEGEND = (
    "`1` `2` `3` first correct / incorrect / unsure · `8` `9` `0` second correct / incorrect / unsure · "
    "`A` first better · `T` tie · `D` second better · `X` exclude · `E` write a note (`Esc` leaves it) · "
    "`Enter` record (`Ctrl+Enter` from the note) · `N` next undecided disagreement · `Z` full-size image "
    "(responses' images: `V` flips first / second in place, `Esc` closes)"
)


# A scheme's form (annotate/scheme_ui.py): each field's widget key starts with field_prefix; the
# form carries its keymap as JSON in an element of class KEYMAP_CLASS, which the listener reads
# on each key over the page's static map (a field name holds no "-", so no prefix is another's).
KEYMAP_CLASS = "mmrb-keymap"
PAGE_KEYS_LEGEND = (
    "`F` flag · `Enter` submit (`Ctrl+Enter` from a text box) · `S` skip · `U` undo last · `Z` full-size image · "
    "`V` flips the responses' images left / right in one place, full size (`Esc` closes)"
)


NOTE_PREFIX = "qs--note-"  # the flag's note box of a scheme without text fields (no field name is empty)


def field_prefix(name: str, part: str) -> str:
    """The widget key prefix of a scheme field's answer: ``part`` is all, left or right."""
    return f"qs-{name}-{part}-"


def scheme_keymap(scheme: Scheme) -> dict[str, Any]:
    """The form's keys for the listener: each option's key (the scheme's; per response the
    left's options, then the right's) and E for the first text field."""
    out: dict[str, list[Any]] = {}
    for f in scheme.fields:
        n = len(f.options)
        for i, k in enumerate(f.keys):
            part = ("left" if i < n else "right") if f.per_response else "all"
            out[k] = [field_prefix(f.name, part), i % n if f.per_response else i]
    texts = [f for f in scheme.fields if f.kind == "text"]
    focus = {"e": field_prefix(texts[0].name, "all") if texts else NOTE_PREFIX}
    return {"keys": out, "focus": focus}


def scheme_legend(scheme: Scheme) -> str:
    """The keys of a scheme's form in words, then the page's own."""
    parts = []
    for f in scheme.fields:
        if not f.keys:
            continue
        shown = " / ".join(option_title(f, v) for v in choices(f))
        if f.per_response:
            n = len(f.options)
            for side, ks in (("left", f.keys[:n]), ("right", f.keys[n:])):
                parts.append(f"{' '.join(f'`{k.upper()}`' for k in ks)} {side} {f.title.lower()}: {shown}")
        else:
            parts.append(f"{' '.join(f'`{k.upper()}`' for k in f.keys)} {f.title.lower()}: {shown}")
    texts = [f for f in scheme.fields if f.kind == "text"]
    parts.append(f"`E` write the {texts[0].title.lower() if texts else 'note'} (`Esc` leaves it)")
    return " · ".join([*parts, PAGE_KEYS_LEGEND])


def option_keys(keymap: dict[str, tuple[str, int | None]], prefix: str) -> dict[int, str]:
    """The key that picks each option (by its index) of the radio ``prefix``, as the legends
    write it: the forms show these beside their options."""
    return {i: k.upper() for k, (p, i) in keymap.items() if p == prefix and i is not None}


@dataclass(frozen=True)
class KeyMap:
    """The keys of one page, acting inside the container ``root`` (a CSS selector)."""

    root: str
    keys: dict[str, tuple[str, int | None]]
    submit: str  # the button Ctrl+Enter presses from a text box
    cycle: dict[str, str] = field(default_factory=dict)  # key -> radio whose next option it picks
    focus: dict[str, str] = field(default_factory=dict)  # key -> text box it focuses


MAPS = (
    KeyMap(".st-key-mmrb-label, .st-key-mmrb-edit", KEYS, "q_submit", CYCLE, FOCUS),
    KeyMap(".st-key-mmrb-adjudicate", ADJ_KEYS, "adj_record", focus={"e": "adj_note"}),
)

_SCRIPT = """
(function () {
  if (window.__mmrbKeys) return;
  window.__mmrbKeys = true;
  const MAPS = %(maps)s;
  const DIALOG = %(dialog)s;
  const find = (root, prefix) => root.querySelector('[class*="st-key-' + prefix + '"]');
  const options = (el) => el ? Array.from(el.querySelectorAll('input[type="radio"]')) : [];
  document.addEventListener('keydown', function (ev) {
    let map = null, root = null;
    for (const m of MAPS) { root = document.querySelector(m.root); if (root) { map = m; break; } }
    if (!root || ev.altKey || ev.metaKey || ev.isComposing) return;
    const t = ev.target;
    const typing = t && (t.tagName === 'TEXTAREA' || t.isContentEditable ||
      (t.tagName === 'INPUT' && !['radio', 'checkbox', 'button'].includes(t.type)));
    const dialog = document.querySelector('[role="dialog"]');
    if (dialog && ev.key !== 'Escape') {
      const d = DIALOG[ev.key.length === 1 ? ev.key.toLowerCase() : ev.key];
      // the zoom's select keeps focus after a choice: its filter is not a text box to type V in
      if (!d || (typing && t.getAttribute('role') !== 'combobox') || ev.ctrlKey) return;
      // the flip's checkbox when the view shows it, else the view's option that shows it
      const box = dialog.querySelector(d[0]);
      const opt = box || options(find(dialog, d[1]))[d[2]];
      if (opt) { opt.click(); ev.preventDefault(); ev.stopPropagation(); }
      return;
    }
    if (typing) {
      if (ev.key === 'Escape') { t.blur(); ev.preventDefault(); }
      else if (ev.key === 'Enter' && ev.ctrlKey && t.tagName === 'TEXTAREA') {
        // let the text area commit its value first, then submit
        ev.preventDefault(); ev.stopPropagation(); t.blur();
        setTimeout(() => { const b = find(root, map.submit); b && b.querySelector('button').click(); }, 60);
      }
      return;
    }
    if (ev.ctrlKey) return;
    const k = ev.key.length === 1 ? ev.key.toLowerCase() : ev.key;
    let done = false;
    // a scheme's form says its own keys (annotate/scheme_ui.py) over the page's
    let keys = map.keys, focus = map.focus;
    const own = root.querySelector('.%(keymap)s');
    if (own) {
      const d = JSON.parse(own.dataset.keys);
      keys = Object.assign({}, map.keys, d.keys); focus = Object.assign({}, map.focus, d.focus);
    }
    if (keys[k]) {
      const [prefix, index] = keys[k];
      const el = find(root, prefix) || find(document, prefix);
      if (el && index === null) {
        const b = el.querySelector('button, input[type="checkbox"]');
        if (b && !b.disabled) { b.click(); done = true; }
      }
      else if (el) { const o = options(el)[index]; if (o) { o.click(); done = true; } }
    } else if (map.cycle[k]) {
      const opts = options(find(root, map.cycle[k]));
      if (opts.length) {
        const cur = opts.findIndex((o) => o.checked);
        opts[(cur + 1) %% opts.length].click(); done = true;
      }
    } else if (focus[k]) {
      const el = find(root, focus[k]); const ta = el && el.querySelector('textarea');
      if (ta) { ta.focus(); done = true; }
    }
    if (done) { ev.preventDefault(); ev.stopPropagation(); }
  }, true);
  // the full-size view side by side: scrolling one image scrolls the other to the same place
  let syncing = false;
  document.addEventListener('scroll', function (ev) {
    const f = ev.target;
    if (syncing || !f.classList || !f.classList.contains('mmrb-zoom-frame')) return;
    const both = f.closest('.mmrb-side-by-side');
    if (!both) return;
    syncing = true;
    for (const g of both.querySelectorAll('.mmrb-zoom-frame')) {
      if (g !== f) { g.scrollTop = f.scrollTop; g.scrollLeft = f.scrollLeft; }
    }
    requestAnimationFrame(() => { syncing = false; });
  }, true);
})();
"""


def script() -> str:
    """The listener as a <script> for ``st.html(..., unsafe_allow_javascript=True)``."""
    maps = [
        dict(
            root=m.root, keys={k: [p, i] for k, (p, i) in m.keys.items()}, submit=m.submit, cycle=m.cycle, focus=m.focus
        )
        for m in MAPS
    ]
    dialog = {k: list(v) for k, v in DIALOG_KEYS.items()}
    return (
        "<script>"
        + _SCRIPT % {"maps": json.dumps(maps), "dialog": json.dumps(dialog), "keymap": KEYMAP_CLASS}
        + "</script>"
    )
