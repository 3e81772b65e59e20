"""Keyboard map of the label page and the small script that makes it work.

Streamlit's own button shortcuts do not fire while focus sits on a radio option (which is
where focus is after a click), so one capture-phase listener on the document handles every
key, whatever has focus, and ignores keys typed into the rationale box.
"""

from __future__ import annotations

import json

# key -> (widget key prefix, option index) for radios, or (button key prefix, None)
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
SUBMIT_IN_TEXT = "Ctrl+Enter"

LEGEND = (
    "`1` `2` `3` left correct / incorrect / unsure · `8` `9` `0` right correct / incorrect / unsure · "
    "`A` left better · `T` tie · `D` right better · `E` write rationale (`Esc` leaves it) · `F` flag · "
    "`Enter` submit (`Ctrl+Enter` from the rationale) · `S` skip · `U` undo last · `Z` full-size image"
)

_SCRIPT = """
(function () {
  if (window.__mmrbKeys) return;
  window.__mmrbKeys = true;
  const KEYS = %(keys)s, CYCLE = %(cycle)s, FOCUS = %(focus)s;
  const find = (root, prefix) => root.querySelector('[class*="st-key-' + prefix + '"]');
  const options = (el) => el ? Array.from(el.querySelectorAll('input[type="radio"]')) : [];
  document.addEventListener('keydown', function (ev) {
    const root = document.querySelector('.st-key-mmrb-label, .st-key-mmrb-edit');
    if (!root || ev.altKey || ev.metaKey || ev.isComposing) return;
    if (document.querySelector('[role="dialog"]') && ev.key !== 'Escape') return;
    const t = ev.target;
    const typing = t && (t.tagName === 'TEXTAREA' || t.isContentEditable ||
      (t.tagName === 'INPUT' && !['radio', 'checkbox', 'button'].includes(t.type)));
    if (typing) {
      if (ev.key === 'Escape') { t.blur(); ev.preventDefault(); }
      else if (ev.key === 'Enter' && ev.ctrlKey && t.tagName === 'TEXTAREA') {
        // let the text area commit its value first, then submit
        ev.preventDefault(); ev.stopPropagation(); t.blur();
        setTimeout(() => { const b = find(root, 'q_submit'); b && b.querySelector('button').click(); }, 60);
      }
      return;
    }
    if (ev.ctrlKey) return;
    const k = ev.key.length === 1 ? ev.key.toLowerCase() : ev.key;
    let done = false;
    if (KEYS[k]) {
      const [prefix, index] = KEYS[k];
      const el = find(root, prefix) || find(document, prefix);
      if (el && index === null) {
        const b = el.querySelector('button'); if (b && !b.disabled) { b.click(); done = true; }
      }
      else if (el) { const o = options(el)[index]; if (o) { o.click(); done = true; } }
    } else if (CYCLE[k]) {
      const opts = options(find(root, CYCLE[k]));
      if (opts.length) {
        const cur = opts.findIndex((o) => o.checked);
        opts[(cur + 1) %% opts.length].click(); done = true;
      }
    } else if (FOCUS[k]) {
      const el = find(root, FOCUS[k]); const ta = el && el.querySelector('textarea');
      if (ta) { ta.focus(); done = true; }
    }
    if (done) { ev.preventDefault(); ev.stopPropagation(); }
  }, true);
})();
"""


def script() -> str:
    """The listener as a <script> for ``st.html(..., unsafe_allow_javascript=True)``."""
    keys = {k: [p, i] for k, (p, i) in KEYS.items()}
    return (
        "<script>"
        + _SCRIPT % {"keys": json.dumps(keys), "cycle": json.dumps(CYCLE), "focus": json.dumps(FOCUS)}
        + "</script>"
    )
