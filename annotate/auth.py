"""Local accounts: argon2 password hashes, roles, signed session tokens, page access.

Pure logic (no Streamlit): the sign-in page and ``mmrb annotators`` both call it.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from curate.errors import MmrbError
from curate.model import ROLES, Annotator
from curate.store import Store

_hasher = PasswordHasher()  # argon2id with the library's current recommended parameters
MIN_PASSWORD = 8
SESSION_HOURS = 12
ADMIN = "admin"


def hash_password(password: str) -> str:
    if len(password) < MIN_PASSWORD:
        raise MmrbError(f"password too short: use at least {MIN_PASSWORD} characters")
    return _hasher.hash(password)


def verify_password(stored_hash: str | None, password: str) -> bool:
    if not stored_hash:
        return False
    try:
        return _hasher.verify(stored_hash, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def authenticate(store: Store, name: str, password: str) -> Annotator | None:
    """The active annotator with this name and password, or None (never says which part failed)."""
    who = store.get_annotator(name.strip())
    if who is None:
        _hasher.hash(password or "x" * MIN_PASSWORD)  # same cost as a real check: no name probing by timing
        return None
    if not verify_password(who.password_hash, password) or not who.active:
        return None
    if _hasher.check_needs_rehash(who.password_hash):
        store.update_annotator(who.name, password_hash=_hasher.hash(password))
    return who


def add_account(store: Store, name: str, password: str, role: str = "annotator") -> Annotator:
    name = name.strip()
    if not name or any(ch.isspace() for ch in name) or len(name) > 100:
        raise MmrbError(f"invalid annotator name {name!r}: one word, at most 100 characters")
    if role not in ROLES:
        raise MmrbError(f"unknown role {role!r}: use one of {', '.join(ROLES)}")
    existing = store.get_annotator(name)
    if existing is not None and existing.password_hash is None:
        # created without a password by `mmrb assign`: give it one
        store.update_annotator(name, password_hash=hash_password(password), role=role, active=True)
        return store.get_annotator(name)
    a = Annotator(name, role, hash_password(password), True)  # type: ignore[arg-type]
    store.add_annotator(a)
    return a


def reset_password(store: Store, name: str, password: str) -> None:
    store.update_annotator(name, password_hash=hash_password(password))


def set_active(store: Store, name: str, active: bool) -> None:
    store.update_annotator(name, active=active)


# -- sessions that survive a browser refresh ---------------------------------------------
# A cookie holds "name.expiry.mac"; the MAC covers the password hash, so resetting the
# password or disabling the account ends every session.
def _secret(store: Store) -> bytes:
    s = store.get_setting("session_secret")
    if s is None:
        try:
            store.set_setting("session_secret", secrets.token_hex(32))
        except Exception:
            pass  # another process created it first
        s = store.get_setting("session_secret")
    return bytes.fromhex(s)


def _mac(secret: bytes, name: str, expiry: int, pw_hash: str | None) -> str:
    msg = f"{name}\n{expiry}\n{pw_hash or ''}".encode()
    return hmac.new(secret, msg, hashlib.sha256).hexdigest()[:40]


def make_token(store: Store, who: Annotator, *, now: float | None = None, hours: float = SESSION_HOURS) -> str:
    expiry = int((now or time.time()) + hours * 3600)
    return f"{who.name}.{expiry}.{_mac(_secret(store), who.name, expiry, who.password_hash)}"


def check_token(store: Store, token: str | None, *, now: float | None = None) -> Annotator | None:
    if not isinstance(token, str) or token.count(".") < 2:
        return None
    name, expiry_s, mac = token.rsplit(".", 2)
    try:
        expiry = int(expiry_s)
    except ValueError:
        return None
    if expiry < (now or time.time()):
        return None
    who = store.get_annotator(name)
    if who is None or not who.active:
        return None
    if not hmac.compare_digest(mac, _mac(_secret(store), name, expiry, who.password_hash)):
        return None
    return who


# -- who may open what -------------------------------------------------------------------
ANNOTATOR_PAGES = frozenset({"label", "my_labels", "guidelines"})
ADMIN_PAGES = frozenset({"admin_progress", "admin_agreement", "admin_adjudicate", "admin_annotators", "leaderboard"})


def account_for_identity(store: Store, email: str | None) -> Annotator | None:
    """The account an OIDC identity signs in as: the active account named by its e-mail.
    An identity provider vouches for who someone is, not for access here."""
    if not email:
        return None
    who = store.get_annotator(email)
    return who if who is not None and who.active else None


def can_open(who: Annotator | None, page: str) -> bool:
    if who is None or not who.active:
        return page == "signin"
    if page in ANNOTATOR_PAGES or page == "signin":
        return True
    return page in ADMIN_PAGES and who.role == ADMIN
