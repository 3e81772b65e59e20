"""Key/value settings of a store (schema version, guidelines, assignment bookkeeping)."""

from __future__ import annotations

from sqlalchemy import insert, select, update

from . import schema as S
from .base import Conn, StoreBase


class SettingsStore(StoreBase):
    def get_setting(self, key: str, default: str | None = None, conn: Conn | None = None) -> str | None:
        with self._r(conn) as c:
            row = c.execute(select(S.settings.c.value).where(S.settings.c.key == key)).first()
        return row[0] if row else default

    def set_setting(self, key: str, value: str, conn: Conn | None = None) -> None:
        with self._w(conn) as c:
            n = c.execute(update(S.settings).where(S.settings.c.key == key).values(value=value)).rowcount
            if not n:
                c.execute(insert(S.settings).values(key=key, value=value))
