#!/usr/bin/env python3
"""A fake OpenAI-compatible server on Python's http.server, for benches/fake_openai.rs.

It answers every `POST .../chat/completions` after a fixed delay with the body in
`--body FILE`, the way a plain `http.server` program does: HTTP/1.1, the status line and
headers in one write, then the body in a second write, Nagle's algorithm left on (the
standard library's default). `--mode` picks the connection handling:

  close       close the connection after each reply, without a `Connection: close`
              header (what a handler that sets `close_connection` does)
  keepalive   keep the connection open for the next request (HTTP/1.1's default)
  onesend     like close, but headers and body go out in one write

`GET /count` answers the number of chat requests served so far and resets it (the bench
checks that every trial reached the server). The first line on stdout is
`listening http://127.0.0.1:PORT/v1`.

Standard library only: python3 is on every machine the bench runs on.
"""

import argparse
import http.server
import sys
import threading
import time


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mode", choices=["close", "keepalive", "onesend"], default="close")
    parser.add_argument("--delay-ms", type=float, default=50.0)
    parser.add_argument("--body", required=True, help="file with the JSON answer")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    with open(args.body, "rb") as f:
        body = f.read()
    delay = args.delay_ms / 1000.0
    lock = threading.Lock()
    served = [0]

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def do_GET(self):
            if self.path != "/count":
                self.send_error(404)
                return
            with lock:
                n, served[0] = served[0], 0
            text = b"%d" % n
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(text)))
            self.end_headers()
            self.wfile.write(text)

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            self.rfile.read(length)
            if not self.path.endswith("/chat/completions"):
                self.send_error(404)
                return
            with lock:
                served[0] += 1
            time.sleep(delay)
            if args.mode == "onesend":
                head = (
                    b"HTTP/1.1 200 OK\r\nServer: fake\r\nContent-Type: application/json\r\n"
                    b"Content-Length: %d\r\n\r\n" % len(body)
                )
                self.wfile.write(head + body)
            else:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()  # first write: status line and headers
                self.wfile.write(body)  # second write: the body
            if args.mode != "keepalive":
                self.close_connection = True

    class Server(http.server.ThreadingHTTPServer):
        # The standard library's backlog is 5: at -j 64 most connection attempts would
        # wait for a SYN retransmission (1 s), for the bare client and toolgauge alike,
        # and the bench would measure the kernel's retry timer.
        request_queue_size = 1024
        daemon_threads = True

    server = Server(("127.0.0.1", args.port), Handler)
    print("listening http://127.0.0.1:%d/v1" % server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    sys.exit(0)


if __name__ == "__main__":
    main()
