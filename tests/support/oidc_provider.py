"""A loopback OpenID Connect provider for the browser tests of organisation sign-in
(Streamlit's st.login, through Authlib; keys and tokens by joserfc, which Authlib uses):
discovery, an authorisation endpoint that signs in ``email`` at once (no consent screen), a
token endpoint issuing an RS256 ID token with the request's nonce, and the key set to check
it. It stands in for the organisation's provider only; the app knows nothing of it beyond
the [auth] settings a deployment writes."""

from __future__ import annotations

import json
import secrets
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from joserfc import jwt
from joserfc.jwk import RSAKey

CLIENT_ID = "mmrb-studio"
CLIENT_SECRET = "loopback-secret"


class OIDCProvider:
    def __init__(self, email: str):
        self.email = email
        self.key = RSAKey.generate_key(2048, parameters={"kid": "k1"})
        self.codes: dict[str, str] = {}  # code -> the nonce of the authorisation that issued it
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def secrets_toml(self, app_url: str) -> str:
        """The [auth] section a deployment of the app at ``app_url`` writes for this provider."""
        return (
            "[auth]\n"
            f'redirect_uri = "{app_url}/oauth2callback"\n'
            f'cookie_secret = "{secrets.token_hex(16)}"\n'
            f'client_id = "{CLIENT_ID}"\n'
            f'client_secret = "{CLIENT_SECRET}"\n'
            f'server_metadata_url = "{self.url}/.well-known/openid-configuration"\n'
        )

    def _id_token(self, nonce: str) -> str:
        now = int(time.time())
        claims = {
            "iss": self.url,
            "sub": self.email,
            "aud": CLIENT_ID,
            "iat": now,
            "exp": now + 600,
            "nonce": nonce,
            "email": self.email,
            "email_verified": True,
        }
        return jwt.encode({"alg": "RS256", "kid": "k1"}, claims, self.key)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def _json(self, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                url = urllib.parse.urlsplit(self.path)
                q = dict(urllib.parse.parse_qsl(url.query))
                if url.path == "/.well-known/openid-configuration":
                    self._json(
                        {
                            "issuer": provider.url,
                            "authorization_endpoint": provider.url + "/authorize",
                            "token_endpoint": provider.url + "/token",
                            "jwks_uri": provider.url + "/jwks",
                            "response_types_supported": ["code"],
                            "subject_types_supported": ["public"],
                            "id_token_signing_alg_values_supported": ["RS256"],
                        }
                    )
                elif url.path == "/jwks":
                    self._json({"keys": [provider.key.as_dict(private=False)]})
                elif url.path == "/authorize":
                    code = secrets.token_urlsafe(16)
                    provider.codes[code] = q.get("nonce", "")
                    back = urllib.parse.urlencode({"code": code, "state": q.get("state", "")})
                    self.send_response(302)
                    self.send_header("Location", f"{q['redirect_uri']}?{back}")
                    self.end_headers()
                else:
                    self.send_error(404)

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
                form = dict(urllib.parse.parse_qsl(body))
                nonce = provider.codes.pop(form.get("code", ""), None)
                if self.path != "/token" or nonce is None:
                    self.send_error(400)
                    return
                self._json(
                    {
                        "access_token": secrets.token_urlsafe(16),
                        "token_type": "Bearer",
                        "expires_in": 600,
                        "id_token": provider._id_token(nonce),
                    }
                )

        return Handler

    def __enter__(self) -> OIDCProvider:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
