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
}
CYCLE = {"f": "q_flag"}  # moves to the next option, wrapping
FOCUS = {"e": "q_rationale"}
# Keys of the full-size view (a dialog, where the page's keys are off): V flips between the
# two responses' images in one place (the view's checkbox), or switches the view to the flip.
FLIP = "v"
DIALOG_KEYS = {FLIP: (".mmrb-flip-toggle", "zoom_view", 1)}

LEGEND = (
    "`1` `2` `3` left correct / incorrect / unsure · `8` `9` `0` right correct / incorrect / unsure · "
    "`A` left better · `T` tie · `D` right better · `E` write rationale (`Esc` leaves it) · `F` flag · "
    "`Enter` submit (`Ctrl+Enter` from the rationale) · `S` skip · `U` undo last · `Z` full-size image "
    "(responses' images: `V` flips left / right in place, `Esc` closes)"
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
      if (!d || typing || ev.ctrlKey) return;
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
    if (map.keys[k]) {
      const [prefix, index] = map.keys[k];
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
    } else if (map.focus[k]) {
      const el = find(root, map.focus[k]); const ta = el && el.querySelector('textarea');
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
    return "<script>" + _SCRIPT % {"maps": json.dumps(maps), "dialog": json.dumps(dialog)} + "</script>"
