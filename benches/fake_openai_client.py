#!/usr/bin/env python3
"""A bare Python client for benches/fake_openai.rs: N chat-completion POSTs with
`http.client`, one request per connection, J at a time (threads), the same body each
time. Prints `wall_s errors`. Standard library only.

usage: fake_openai_client.py URL BODY_FILE REQUESTS CONCURRENCY [keepalive]

With `keepalive` each thread keeps its connection for its next request.
"""

import http.client
import sys
import threading
import time
import urllib.parse


def main():
    url, body_file, requests, concurrency = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    keepalive = sys.argv[5:] == ["keepalive"]
    with open(body_file, "rb") as f:
        body = f.read()
    u = urllib.parse.urlsplit(url)
    path = u.path.rstrip("/") + "/chat/completions"
    lock = threading.Lock()
    left = [requests]
    errors = [0]

    def worker():
        conn = None
        while True:
            with lock:
                if left[0] == 0:
                    return
                left[0] -= 1
            try:
                if conn is None:
                    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
                # bytes body: http.client sends headers and body in one send().
                conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
                resp = conn.getresponse()
                data = resp.read()
                if not keepalive or resp.will_close:
                    conn.close()
                    conn = None
                ok = resp.status == 200 and data
            except OSError:
                ok = False
                conn = None
            if not ok:
                with lock:
                    errors[0] += 1

    started = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("%.6f %d" % (time.perf_counter() - started, errors[0]))


if __name__ == "__main__":
    main()
