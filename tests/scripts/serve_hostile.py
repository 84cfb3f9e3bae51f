#!/usr/bin/env python3
# serve_hostile.py PORT STDERR T0 ALONE - the hostile client of
# serve_hostile.sh (read there what it does): T0 is when the server was
# started (seconds since the epoch), ALONE how long the run took without
# this client.  Prints one line per check; exit 0 when all hold.
import json
import socket
import sys
import time

port, stderr_path = int(sys.argv[1]), sys.argv[2]
t0, alone = float(sys.argv[3]), float(sys.argv[4])
failed = 0


def check(ok, what):
    global failed
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failed += 1


def connect():
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    return s


def exchange(raw, read_all=True):
    """Sends raw bytes, returns (status, head, body) of the answer."""
    s = connect()
    try:
        s.sendall(raw)
        data = b""
        while True:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                break
            data += chunk
            if not read_all and b"\r\n\r\n" in data:
                break
    finally:
        s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    line = head.split(b"\r\n", 1)[0].decode("latin-1")
    parts = line.split(" ")
    status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
    return status, head.decode("latin-1"), body


def status_of(raw):
    return exchange(raw)[0]


def model():
    st, _, body = exchange(b"GET /model.json HTTP/1.1\r\nHost: x\r\n\r\n")
    return st, (json.loads(body) if st == 200 else None)


def last_step(m):
    return m["steps"][-1]["i"] if m and m["steps"] else 0


# ---------------------------------------------------------------- hostile fields
st, m = model()
check(st == 200, "GET /model.json answers 200")
bad = [
    (b"GET /events?from=-1 HTTP/1.1\r\n\r\n", 400, "a negative step (from=-1)"),
    (b"GET /events?from=-9223372036854775808 HTTP/1.1\r\n\r\n", 400, "the most negative step"),
    (b"GET /events?from=99999999999999999999999 HTTP/1.1\r\n\r\n", 400, "a step past 64 bits"),
    (b"GET /events?from=9223372036854775807 HTTP/1.1\r\n\r\n", 400, "INT64_MAX as the step"),
    (b"GET /events?from=1000000000 HTTP/1.1\r\n\r\n", 400, "a step past the last one"),
    (b"GET /events?from=abc HTTP/1.1\r\n\r\n", 400, "a step that is not a number"),
    (b"GET /events?from= HTTP/1.1\r\n\r\n", 400, "an empty step"),
    (b"GET /events?from=1e3 HTTP/1.1\r\n\r\n", 400, "a step in exponent form"),
    (b"GET /events?from=0x10 HTTP/1.1\r\n\r\n", 400, "a step in hexadecimal"),
    (b"GET /events?from=+1 HTTP/1.1\r\n\r\n", 400, "a step with a sign"),
    (b"GET /events?from=1&from=2 HTTP/1.1\r\n\r\n", 400, "a second parameter"),
    (b"GET /events?to=1 HTTP/1.1\r\n\r\n", 400, "an unknown parameter"),
    (b"GET /?x=1 HTTP/1.1\r\n\r\n", 400, "a query on the page"),
    (b"GET /model.json?from=1 HTTP/1.1\r\n\r\n", 400, "a query on the model"),
    (b"GET / HTTP/9.9\r\n\r\n", 400, "an unknown HTTP version"),
    (b"GET /\r\n\r\n", 400, "a request line without a version"),
    (b"GET  / HTTP/1.1\r\n\r\n", 400, "two spaces in the request line"),
    (b"GET / HTTP/1.1 extra\r\n\r\n", 400, "a request line with four fields"),
    (b"\x00\x01\x02\xff\r\n\r\n", 400, "binary garbage"),
    (b"GET /\x00 HTTP/1.1\r\n\r\n", 400, "a NUL byte in the target"),
    (b"GET /\xc3\xa9 HTTP/1.1\r\n\r\n", 400, "a non-ASCII target"),
    (b"G\x7fT / HTTP/1.1\r\n\r\n", 400, "a control character in the method"),
    (b"GET / HTTP/1.1\r\nno colon here\r\n\r\n", 400, "a header line without a colon"),
    (b"GET / HTTP/1.1\r\nBad Name: x\r\n\r\n", 400, "a header name with a space"),
    (b"GET / HTTP/1.1\r\nX: a\x01b\r\n\r\n", 400, "a control character in a header value"),
    (b"GET / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", 400, "a GET with a body"),
    (b"GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "a chunked GET"),
    (b"GET " + b"/" * 20000 + b" HTTP/1.1\r\n\r\n", 431, "a request longer than 8192 bytes"),
    (b"GET / HTTP/1.1\r\n" + b"X: y\r\n" * 3000 + b"\r\n", 431, "too many header bytes"),
    (b"DELETE / HTTP/1.1\r\n\r\n", 405, "another method"),
    (b"GET /../../etc/passwd HTTP/1.1\r\n\r\n", 404, "a path outside the server"),
    (b"GET http://example.com/ HTTP/1.1\r\n\r\n", 400, "an absolute URL as the target"),
]
for raw, want, what in bad:
    try:
        got = status_of(raw)
    except OSError as e:
        got = "error: %s" % e
    check(got == want, "%s is answered %s (got %s)" % (what, want, got))
st, m = model()
check(st == 200, "the server lives on after %d hostile requests" % len(bad))

# ---------------------------------------------------------------- slow and idle clients
held = []
# event streams that are never read, with tiny receive buffers
for _ in range(4):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET /events?from=0 HTTP/1.1\r\n\r\n")
    held.append(s)
# 200 idle connections: nothing, or half a request
for k in range(200):
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    if k % 2:
        s.sendall(b"GET / HT")
    held.append(s)
check(True, "opened %d connections that do not read or send" % len(held))
n_streams = 4

# a well-behaved client is not locked out, and the run goes on: it reads an
# event stream, and asks for the model every second meanwhile
ta = time.time()
st, m1 = model()
check(st == 200, "with them open, GET /model.json still answers 200 (%.1f s)" % (time.time() - ta))
first = last_step(m1)
s = connect()
s.sendall(("GET /events?from=%d HTTP/1.1\r\n\r\n" % first).encode())
buf, steps, ended = b"", [], False
deadline = time.time() + 600
s.settimeout(1)
asked, answered, nextask, tend = 0, 0, time.time() + 1, None
while time.time() < deadline and not ended:
    if time.time() >= nextask:
        asked += 1
        answered += model()[0] == 200
        nextask = time.time() + 1
    try:
        chunk = s.recv(65536)
    except socket.timeout:
        continue
    if not chunk:
        break
    buf += chunk
    while b"\n\n" in buf:
        ev, buf = buf.split(b"\n\n", 1)
        if ev.startswith(b"event: step"):
            steps.append(json.loads(ev.split(b"data: ", 1)[1]))
        elif ev.startswith(b"event: end"):
            ended, tend = True, time.time()
s.close()
check(len(steps) > 0 and all(st["i"] == first + 1 + k for k, st in enumerate(steps)),
      "new steps arrive, once each and in order (%d after step %d)" % (len(steps), first))
check(ended, "the run ends with the hostile connections open (the stream got its end)")
check(asked > 0 and answered == asked, "the model was answered %d times of %d while the stream went on" % (answered, asked))
took = (tend or time.time()) - t0
check(took <= 4 * alone + 30, "the run took %.1f s with the hostile client, %.1f s alone (at most 4 times plus 30 s)" % (took, alone))
with open(stderr_path) as f:
    check("the run is over" in f.read(), "the run is over")
st, m2 = model()
check(st == 200 and last_step(m2) >= first + len(steps), "the model holds every step after the run")
# pages asked for and never read, now that the page is larger than a
# connection's kernel buffers; all held long past the stall limit (2 s),
# so that the server drops them (it reports them at its end)
for _ in range(2):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET / HTTP/1.1\r\n\r\n")
    held.append(s)
check(True, "asked for 2 pages it does not read (%d connections that do not read in all)" % (n_streams + 2))
time.sleep(10)
for s in held:
    s.close()
sys.exit(1 if failed else 0)
