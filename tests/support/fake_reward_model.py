"""A loopback scalar reward model over HTTP, with scripted faults."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class RM:
    """A loopback scalar reward model: score = number of 'good' in the response."""

    def __init__(self, fail_first: int = 0, field: str = "out"):
        self.bodies: list[dict] = []
        self.fail_first = fail_first
        outer = self

        class H(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                outer.bodies.append(body)
                if outer.fail_first > 0:
                    outer.fail_first -= 1
                    self.send_response(503)
                    self.send_header("retry-after", "0")
                    self.end_headers()
                    return
                data = json.dumps({field: {"rewards": [float(body["input"]["text"].count("good"))]}}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *a):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/score"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()
