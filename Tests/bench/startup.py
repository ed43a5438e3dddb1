"""Start-up to first byte of `liveactivity serve`: spawn it (in memory, port 0), wait for its
"Listening on" line, then time the first byte of a WebSocket handshake answer. Repeats 5 times,
prints one JSON object with every try and the medians (milliseconds).

    python3 Tests/bench/startup.py .build/release/liveactivity Public
"""
from __future__ import annotations

import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time

LISTENING = re.compile(r"^Listening on http://127\.0\.0\.1:(\d+)/$")


def one(binary: str, public: str) -> tuple[float, float]:
    start = time.perf_counter()
    proc = subprocess.Popen([binary, "serve", "--memory", "--port", "0", "--public", public],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env={**os.environ, "SWIFT_BACKTRACE": "enable=no"})
    try:
        line = proc.stdout.readline().strip()
        listening = time.perf_counter()
        match = LISTENING.match(line)
        if not match:
            raise SystemExit(f"startup.py: unexpected first line {line!r}")
        with socket.create_connection(("127.0.0.1", int(match.group(1))), timeout=5) as sock:
            sock.sendall(b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                         b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
            first = sock.recv(1)
            first_byte = time.perf_counter()
            if not first:
                raise SystemExit("startup.py: the server closed the connection without answering")
        return (listening - start) * 1000, (first_byte - start) * 1000
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main() -> None:
    binary, public = sys.argv[1], sys.argv[2]
    tries = [one(binary, public) for _ in range(5)]
    print(json.dumps({
        "listening_ms": [round(t[0], 2) for t in tries],
        "first_byte_ms": [round(t[1], 2) for t in tries],
        "listening_ms_median": round(statistics.median(t[0] for t in tries), 2),
        "first_byte_ms_median": round(statistics.median(t[1] for t in tries), 2),
    }))


if __name__ == "__main__":
    main()
