"""Local accounts: argon2 password hashes, roles, sign-in throttling, page access.

Pure logic (no Streamlit): the sign-in page and ``mmrb annotators`` both call it. Sessions
are in annotate/sessions.py; whatever changes who an account is or may do ends its sessions.
"""

from __future__ import annotations

import secrets
import time
import unicodedata
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Literal

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from curate.errors import MmrbError
from curate.lookalike import check_name, lookalike, text_problem
from curate.model import ROLES, Annotator, Role, word_of
from curate.store import Store
from curate.wording import plural

from . import sessions

_hasher = PasswordHasher()  # argon2id with the library's current recommended parameters
MIN_PASSWORD = 8
ADMIN = "admin"

# Throttling: attempts counted per name typed and per client address over a window, in the
# store so that every app process sees them. At most NAME_LIMIT (CLIENT_LIMIT) attempts per
# window get their password checked, in parallel too; a refused one (the right password too)
# is not counted, a successful one clears its name's count.
WINDOW_SECONDS = 15 * 60
Throttle = Literal["name", "client"]  # which limit a refused sign-in ran into
NAME_LIMIT = 5
CLIENT_LIMIT = 20


def hash_password(password: str) -> str:
    if len(password) < MIN_PASSWORD:
        raise MmrbError(f"password too short: use at least {MIN_PASSWORD} characters")
    return _hasher.hash(password)


@lru_cache(maxsize=1)
def dummy_hash() -> str:
    """A hash of a secret nobody knows: verifying against it costs what a real check costs."""
    return _hasher.hash(secrets.token_hex(16))


def verify_password(stored_hash: str | None, password: str) -> bool:
    """Always one argon2 verification, also for an account without a password (against
    ``dummy_hash``), so the answer's timing does not tell such accounts apart."""
    try:
        ok = _hasher.verify(stored_hash or dummy_hash(), password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False
    return ok and bool(stored_hash)


def typed_name(name: str) -> str:
    """A name as typed at sign-in, as accounts are named: NFKC, without surrounding space
    (full-width ``ａｌｉｃｅ`` is ``alice``)."""
    return unicodedata.normalize("NFKC", name).strip()


def _storable(text: str) -> str:
    """``text`` as a throttle key both backends can keep: what no store can hold (a NUL)
    escaped, so a name typed with one is counted like any other."""
    return text if text_problem(text) is None else text.encode("unicode_escape").decode("ascii")


def authenticate(store: Store, name: str, password: str) -> Annotator | None:
    """The active annotator with this name and password, or None (never says which part
    failed). Unknown names, accounts without a password and disabled ones cost one argon2
    verification like any other, so timing does not tell them apart."""
    typed = name.strip()
    who = store.get_annotator(typed)
    if who is None and (norm := typed_name(typed)) != typed:  # accounts are named in NFKC
        who = store.get_annotator(norm)
    ok = verify_password(who.password_hash if who is not None else None, password)
    if not ok or who is None or not who.active:
        return None
    if who.password_hash is not None and _hasher.check_needs_rehash(who.password_hash):
        store.update_annotator(who.name, password_hash=_hasher.hash(password))
    return who


@dataclass(frozen=True)
class SignIn:
    """One sign-in attempt: the account, or why not."""

    who: Annotator | None
    throttled: Throttle | None = None
    retry_after: float = 0.0  # seconds, when throttled

    def message(self) -> str:
        if self.who is not None:
            return ""
        if self.throttled is None:
            return "Wrong name or password, or the account is disabled."
        minutes = max(1, round(self.retry_after / 60))
        wait = f"Try again in {plural(minutes, 'minute')}"
        if self.throttled == "name":
            return f"Too many failed sign-ins for this name. {wait}, or ask your lead to reset the password."
        return f"Too many failed sign-ins from your address. {wait}."


def _retry_after(others: list[float], limit: int, now: float) -> float:
    """Seconds until fewer than ``limit`` of the other attempts lie within the window."""
    return max(0.0, others[len(others) - limit] + WINDOW_SECONDS - now) if len(others) >= limit else 0.0


def sign_in(store: Store, name: str, password: str, *, client: str | None, now: float | None = None) -> SignIn:
    """Check a sign-in against the throttle, then the password."""
    t = time.time() if now is None else now
    name = name.strip()
    keys = {"name": f"name:{_storable(typed_name(name))}", "client": f"client:{_storable(client or 'local')}"}
    attempt = secrets.token_hex(16)
    seen = store.begin_signin_attempt(attempt, keys.values(), at=t, since=t - WINDOW_SECONDS)
    limits: tuple[tuple[Throttle, int], ...] = (("name", NAME_LIMIT), ("client", CLIENT_LIMIT))
    for kind, limit in limits:
        times = seen[keys[kind]]
        if len(times) > limit:  # this attempt included
            store.drop_signin_attempt(attempt)
            others = list(times)
            others.remove(t)
            return SignIn(None, kind, _retry_after(others, limit, t))
    who = authenticate(store, name, password)
    if who is None:
        return SignIn(None)  # the attempt stays: it counts as a failure
    store.drop_signin_attempt(attempt)
    store.clear_signin_attempts(keys["name"])
    return SignIn(who)


def account_name(store: Store, name: str) -> str:
    """``name`` as an account's name: the identifier policy of curate/lookalike.py (NFKC, no
    invisible characters, one script, one word without markup) and no look-alike of another
    account's name (``Iead`` beside ``lead``). Raises MmrbError saying why not."""
    norm, why = check_name(name)
    if why:
        raise MmrbError(f"invalid annotator name {norm!r}: {why}")
    other = lookalike(norm, (a.name for a in store.annotators()))
    if other is not None:
        raise MmrbError(f"invalid annotator name: {norm!r} looks like the account {other!r}; choose another name")
    return norm


SYSTEM = "system"  # who the audit trail names for a change nobody signed in made (the sample's build)


def add_account(store: Store, name: str, password: str, role: str = "annotator", *, by: str | None = None) -> Annotator:
    """Create an account (or give one made without a password its first), recorded in the
    audit trail as done ``by`` in the same transaction."""
    name = account_name(store, name)
    checked = _role(role)
    pw_hash = hash_password(password)  # argon2 before the transaction: no lock held while it works
    with store.transaction() as tx:
        existing = store.get_annotator(name, conn=tx)
        if existing is not None and existing.password_hash is None:
            # created without a password (by `mmrb assign`, or for the organisation's sign-in): give it one
            store.update_annotator(name, conn=tx, password_hash=pw_hash, role=checked, active=True)
            sessions.end_all(store, name, conn=tx)
            store.record_audit(by or SYSTEM, "account.add", name, {"role": checked, "existed": True}, conn=tx)
            return replace(existing, role=checked, password_hash=pw_hash, active=True)
        a = Annotator(name, checked, pw_hash, True)
        store.add_annotator(a, conn=tx)
        store.record_audit(by or SYSTEM, "account.add", name, {"role": checked}, conn=tx)
    return a


def _role(role: str) -> Role:
    checked = word_of(ROLES, role)
    if checked is None:
        raise MmrbError(f"unknown role {role!r}: use one of {', '.join(ROLES)}")
    return checked


def reset_password(store: Store, name: str, password: str, *, by: str | None = None) -> int:
    """Set a new password, end the account's sessions (how many ended are returned) and
    lift the throttle on its name, so the new password works at once."""
    pw_hash = hash_password(password)
    with store.transaction() as tx:
        store.update_annotator(name, conn=tx, password_hash=pw_hash)
        store.clear_signin_attempts(f"name:{name}", conn=tx)
        n = sessions.end_all(store, name, conn=tx)
        store.record_audit(by or SYSTEM, "account.password", name, {"sessions_ended": n}, conn=tx)
    return n


def set_active(store: Store, name: str, active: bool, *, by: str | None = None) -> None:
    """Let the account sign in, or not (its sessions end). ``by``: the admin doing it, who
    cannot disable their own account."""
    if not active and by == name:
        raise MmrbError("You cannot disable your own account.")
    with store.transaction() as tx:
        store.update_annotator(name, conn=tx, active=active)
        n = sessions.end_all(store, name, conn=tx) if not active else 0
        details = {} if active else {"sessions_ended": n}
        store.record_audit(by or SYSTEM, "account.enable" if active else "account.disable", name, details, conn=tx)


def set_role(store: Store, name: str, role: str, *, by: str | None = None) -> None:
    """Make the account an annotator or an admin; its sessions end (its pages change). ``by``:
    the admin doing it, who cannot take the admin role from their own account."""
    checked = _role(role)
    if by == name and checked != ADMIN:
        raise MmrbError("You cannot take the admin role from your own account.")
    with store.transaction() as tx:
        before = store.get_annotator(name, conn=tx)
        if before is None:
            raise MmrbError(f"no annotator named {name!r}")
        store.update_annotator(name, conn=tx, role=checked)
        n = sessions.end_all(store, name, conn=tx)
        details = {"role": checked, "was": before.role, "sessions_ended": n}
        store.record_audit(by or SYSTEM, "account.role", name, details, conn=tx)


def sign_out_everywhere(store: Store, name: str, *, by: str | None = None) -> int:
    """End every session of the account now (a lost laptop); how many ended."""
    with store.transaction() as tx:
        if store.get_annotator(name, conn=tx) is None:
            raise MmrbError(f"no annotator named {name!r}")
        n = sessions.end_all(store, name, conn=tx)
        store.record_audit(by or SYSTEM, "account.signout", name, {"sessions_ended": n}, conn=tx)
    return n


# -- who may open what -------------------------------------------------------------------
@dataclass(frozen=True)
class Page:
    """One page of the app: ``name`` is its script in annotate/views/, its URL path and what
    its script passes to ``annotate.session_ui.require``; app.py builds the navigation from these."""

    name: str
    title: str
    icon: str


def _pages(*pages: Page) -> dict[str, Page]:
    return {p.name: p for p in pages}


SIGNIN = Page("signin", "Sign in", ":material/login:")
# Each in the order the navigation lists it; the first is where that account opens.
ANNOTATOR_PAGES = _pages(
    Page("label", "Label", ":material/rate_review:"),
    Page("my_labels", "My labels", ":material/history:"),
    Page("guidelines", "Guidelines", ":material/menu_book:"),
)
ADMIN_PAGES = _pages(
    Page("admin_progress", "Progress", ":material/monitoring:"),
    Page("admin_agreement", "Agreement", ":material/handshake:"),
    Page("admin_adjudicate", "Adjudication", ":material/gavel:"),
    Page("admin_quality", "Quality", ":material/verified:"),
    Page("admin_annotators", "Annotators", ":material/group:"),
    Page("leaderboard", "Leaderboard", ":material/leaderboard:"),
)


def account_for_identity(store: Store, email: str | None) -> Annotator | None:
    """The account an OIDC identity signs in as: the active account named by its e-mail.
    An identity provider vouches for who someone is, not for access here."""
    if not email:
        return None
    who = store.get_annotator(email)
    return who if who is not None and who.active else None


def identity_refusal(store: Store, email: str | None) -> Literal["no_account", "ended"] | None:
    """Why an organisation identity still on the sign-in page did not start a session: no
    active account has its e-mail, or the account's sessions were ended after it was issued."""
    if not email:
        return None
    return "no_account" if account_for_identity(store, email) is None else "ended"


def can_open(who: Annotator | None, page: str) -> bool:
    if who is None or not who.active:
        return page == SIGNIN.name
    if page in ANNOTATOR_PAGES or page == SIGNIN.name:
        return True
    return page in ADMIN_PAGES and who.role == ADMIN
