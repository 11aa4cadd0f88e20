"""deploy/healthcheck.py, the image's HEALTHCHECK: 0 only for a 200 from /healthz."""

from __future__ import annotations

import runpy
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "deploy" / "healthcheck.py"


class _Handler(BaseHTTPRequestHandler):
    status = 200

    def do_GET(self) -> None:
        code = self.status if self.path == "/healthz" else 404
        self.send_response(code)
        self.end_headers()
        self.wfile.write(b"ok" if code == 200 else b"no")

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[ThreadingHTTPServer]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()
        _Handler.status = 200


def _run(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT)], env=env, capture_output=True, text=True, timeout=30
    )


def test_healthy_when_healthz_answers_200(server: ThreadingHTTPServer) -> None:
    port = server.server_address[1]
    result = _run({"NIUNIU_WEB_LISTEN": f"0.0.0.0:{port}"})
    assert result.returncode == 0, result.stderr


def test_unhealthy_when_healthz_answers_503(server: ThreadingHTTPServer) -> None:
    _Handler.status = 503
    port = server.server_address[1]
    result = _run({"NIUNIU_WEB_LISTEN": f"0.0.0.0:{port}"})
    assert result.returncode == 1
    assert result.stderr.strip() == f"unhealthy: http://127.0.0.1:{port}/healthz answered 503"


def test_unhealthy_when_nothing_listens(server: ThreadingHTTPServer) -> None:
    port = server.server_address[1]
    server.shutdown()
    server.server_close()
    result = _run({"NIUNIU_WEB_LISTEN": f"[::]:{port}"})
    assert result.returncode == 1
    assert "did not answer" in result.stderr


def test_the_port_defaults_to_8080() -> None:
    # The script's functions, loaded from its file (it is no module of a package).
    health_url = runpy.run_path(str(SCRIPT))["health_url"]
    assert health_url({}) == "http://127.0.0.1:8080/healthz"
    assert health_url({"NIUNIU_WEB_LISTEN": "127.0.0.1:9100"}) == ("http://127.0.0.1:9100/healthz")
