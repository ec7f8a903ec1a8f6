#!/usr/bin/env python3
"""Fault-injection HTTP/1.1 test server for Kite's integration tests (python3 stdlib only).

Start: `python3 fault_server.py [--port N] [--no-stdin-watch] [--verbose]`. Binds 127.0.0.1
(port 0 = ephemeral), prints exactly one line `PORT <n>` to stdout, flushes, then serves.
Exits when its stdin reaches EOF (so it dies with the test process that started it: give it a
pipe as stdin) unless --no-stdin-watch, and on SIGTERM / SIGINT.

Requests are parsed by hand from raw sockets (a daemon thread per connection, every socket
operation bounded by a timeout). Keep-alive is the default for HTTP/1.1; `Connection: close`
from the client is honoured. Request bodies may use Content-Length or chunked encoding.
Every "deterministic" body has byte i == i % 251. See README.md for the route list.
"""
import argparse
import base64
import json
import os
import re
import select
import signal
import socket
import struct
import sys
import threading
import time
import zlib
from http import HTTPStatus
from urllib.parse import parse_qs, urlsplit

HEAD_LIMIT = 64 * 1024          # max request head size
HEAD_TIMEOUT = 30.0             # seconds to receive a full request head (also keep-alive idle)
IO_TIMEOUT = 30.0               # per socket operation (recv / one sendall of <= PIECE bytes)
HOLD_MAX = 60                   # max seconds a silent route holds a connection
PIECE = 64 * 1024               # read / write granularity
PATTERN = bytes(range(251)) * 512   # PATTERN[o:o + PIECE] is valid for any o < 251
VERBOSE = False
STATS_LOCK = threading.Lock()
STATS = {"connections": 0, "requests": 0}
SENT = {}                       # /huge-body?id=K: bytes sent so far, by K

def log(*args):
    if VERBOSE:
        print(*args, file=sys.stderr, flush=True)

# ----------------------------------------------------------------------------- bodies

def body_pieces(start, end):
    """Yields the deterministic body bytes [start, end) in pieces of at most PIECE bytes."""
    while start < end:
        n = min(PIECE, end - start)
        yield PATTERN[start % 251:start % 251 + n]
        start += n

def body_slice(start, end):
    return b"".join(body_pieces(start, end))

def gzip_bytes(data):
    co = zlib.compressobj(6, zlib.DEFLATED, 31)
    return co.compress(data) + co.flush()

_GZ_LOCK, _GZ_CACHE, _ZEROS = threading.Lock(), {}, bytes(1 << 20)

def gzip_zeros(n):
    """gzip (RFC 1952) of n zero bytes, cached per n. A 1 MiB zero block is deflated once, ended by
    a Z_FULL_FLUSH (byte-aligned, no back references), and that segment is repeated, so even 1 GiB
    takes well under a second; the CRC-32 is computed by streaming zero blocks."""
    with _GZ_LOCK:
        if n not in _GZ_CACHE:
            q, r = divmod(n, len(_ZEROS))
            co = zlib.compressobj(9, zlib.DEFLATED, -15)
            seg = co.compress(_ZEROS) + co.flush(zlib.Z_FULL_FLUSH)
            co = zlib.compressobj(9, zlib.DEFLATED, -15)
            tail = co.compress(_ZEROS[:r]) + co.flush()           # holds the final block
            crc = 0
            for _ in range(q):
                crc = zlib.crc32(_ZEROS, crc)
            crc = zlib.crc32(_ZEROS[:r], crc)
            _GZ_CACHE[n] = (b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + seg * q + tail +
                            struct.pack("<II", crc, n & 0xFFFFFFFF))
        return _GZ_CACHE[n]

# ----------------------------------------------------------------------------- connection I/O

class ClientGone(Exception):
    """The peer closed the connection or a socket operation timed out."""

class BadRequest(Exception):
    def __init__(self, status, msg):
        super().__init__(msg)
        self.status = status

class Conn:
    """A client socket plus a read buffer (so pipelined / leftover bytes are not lost)."""

    def __init__(self, sock):
        self.sock, self.buf = sock, b""

    def _recv(self, timeout=IO_TIMEOUT):
        self.sock.settimeout(max(0.01, timeout))
        try:
            data = self.sock.recv(PIECE)
        except OSError as e:                    # includes socket.timeout
            raise ClientGone(str(e))
        if not data:
            raise ClientGone("eof")
        self.buf += data

    def send(self, data):
        self.sock.settimeout(IO_TIMEOUT)
        mv = memoryview(data)
        for i in range(0, len(mv), PIECE):      # sendall's timeout is total: bound each piece
            self.sock.sendall(mv[i:i + PIECE])

    def read_head(self):
        """Returns the head bytes (without the final CRLFCRLF), or None on EOF / timeout."""
        deadline = time.monotonic() + HEAD_TIMEOUT
        while True:
            self.buf = self.buf.lstrip(b"\r\n")   # RFC 9112 2.2: ignore leading empty lines
            end = self.buf.find(b"\r\n\r\n")
            if end > HEAD_LIMIT or (end < 0 and len(self.buf) > HEAD_LIMIT):
                raise BadRequest(431, "request head too large")
            if end >= 0:
                head, self.buf = self.buf[:end], self.buf[end + 4:]
                return head
            try:
                self._recv(deadline - time.monotonic())
            except ClientGone:
                return None

    def read_line(self, limit=8192):
        while (i := self.buf.find(b"\r\n")) < 0:
            if len(self.buf) > limit:
                raise BadRequest(400, "line too long")
            self._recv()
        line, self.buf = self.buf[:i], self.buf[i + 2:]
        return line

    def consume(self, n):
        """Reads and discards exactly n bytes."""
        while n > 0:
            if not self.buf:
                self._recv()
            take = min(n, len(self.buf))
            self.buf, n = self.buf[take:], n - take

class Request:
    def __init__(self, head):
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or parts[2] not in ("HTTP/1.0", "HTTP/1.1"):
            raise BadRequest(400, "bad request line")
        self.method, self.target, self.version = parts
        self.headers = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep or not name or name != name.strip():
                raise BadRequest(400, "bad header line")
            key, value = name.lower(), value.strip()
            self.headers[key] = f"{self.headers[key]}, {value}" if key in self.headers else value
        url = urlsplit(self.target)
        self.path = url.path
        self.query = {k: v[0] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        tokens = [t.strip().lower() for t in self.headers.get("connection", "").split(",")]
        self.keep_alive = ("keep-alive" in tokens if self.version == "HTTP/1.0"
                           else "close" not in tokens)
        self.chunked = self.headers.get("transfer-encoding", "").lower().endswith("chunked")
        cl = "0" if self.chunked else self.headers.get("content-length", "0").split(",")[0].strip()
        if not cl.isdigit():
            raise BadRequest(400, "bad content-length")
        self.length = int(cl)

    def qint(self, name, default):
        v = self.query.get(name)
        if not v:
            return default
        try:
            return int(v)
        except ValueError:
            raise BadRequest(400, f"query parameter {name} must be an integer")

    def qstr(self, name, default):
        return self.query.get(name) or default

    def conn_headers(self):
        """The Connection header our response needs, given what the client asked for."""
        if not self.keep_alive:
            return [("Connection", "close")]
        return [("Connection", "keep-alive")] if self.version == "HTTP/1.0" else []

def read_body(conn, req):
    """Reads and discards the request body (Content-Length or chunked); returns its length."""
    if not req.chunked:
        conn.consume(req.length)
        return req.length
    total = 0
    while True:
        size = conn.read_line().split(b";")[0].strip()
        if not re.fullmatch(rb"[0-9A-Fa-f]{1,16}", size):
            raise BadRequest(400, "bad chunk size")
        if (size := int(size, 16)) == 0:
            while conn.read_line():             # trailer section up to the empty line
                pass
            return total
        conn.consume(size)
        if conn.read_line() != b"":
            raise BadRequest(400, "missing CRLF after chunk")
        total += size

def maybe_continue(conn, req):
    if (req.chunked or req.length) and req.headers.get("expect", "").lower() == "100-continue":
        conn.send(b"HTTP/1.1 100 Continue\r\n\r\n")

def reason(status):
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Informational" if 100 <= status < 200 else "Unknown"

def make_head(status, headers, version="HTTP/1.1"):
    lines = [f"{version} {status} {reason(status)}"] + [f"{k}: {v}" for k, v in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

# What a handler returns: KEEP = read the next request if the client allows keep-alive;
# CLOSE = graceful close; STAY = read the next request even if the client asked to close;
# DONE = the handler has closed the socket itself.
KEEP, CLOSE, STAY, DONE = "keep", "close", "stay", "done"

def send_head(conn, req, status, headers):
    conn.send(make_head(status, list(headers) + req.conn_headers()))

def respond(conn, req, status, body=b"", headers=()):
    """Sends a complete response with Content-Length (no body for HEAD)."""
    conn.send(make_head(status, list(headers) + [("Content-Length", len(body))] +
                        req.conn_headers()) + (b"" if req.method == "HEAD" else body))
    return KEEP

def send_stream(conn, req, start, end):
    if req.method != "HEAD":
        for piece in body_pieces(start, end):
            conn.send(piece)

def graceful_close(sock, linger=1.0):
    """FIN, then read (and drop) what the client still sends for up to `linger` s, so the kernel
    does not turn the close into an RST because of unread data."""
    try:
        sock.shutdown(socket.SHUT_WR)
        deadline = time.monotonic() + linger
        while time.monotonic() < deadline:
            sock.settimeout(max(0.01, deadline - time.monotonic()))
            if not sock.recv(PIECE):
                break
    except OSError:
        pass
    finally:
        sock.close()

def unsent_bytes(sock):
    """Bytes sent but not yet acknowledged (Linux TIOCOUTQ / macOS SO_NWRITE); 0 if unknown."""
    try:
        if sys.platform.startswith("linux"):
            import fcntl
            import termios
            return struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0" * 4))[0]
        if sys.platform == "darwin":
            return sock.getsockopt(socket.SOL_SOCKET, 0x1024)
    except (OSError, ImportError):
        pass
    return 0

def rst_close(sock, wait=2.0):
    """Waits (at most `wait` s) until the client has acknowledged everything sent, then closes
    with SO_LINGER (on, 0) so the kernel sends a TCP RST instead of a FIN."""
    deadline = time.monotonic() + wait
    while unsent_bytes(sock) > 0 and time.monotonic() < deadline:
        time.sleep(0.005)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    sock.close()

def hold_open(conn, req, read):
    """Holds the connection until the client closes it or max_s (<= 60) seconds pass. With read,
    incoming bytes are discarded; without, nothing is ever read (the peer's FIN/RST is noticed
    with poll POLLRDHUP on Linux; elsewhere the hold just runs to its deadline)."""
    deadline = time.monotonic() + min(HOLD_MAX, req.qint("max_s", HOLD_MAX))
    poller = None
    if not read:
        poller = select.poll()
        poller.register(conn.sock, select.POLLHUP | select.POLLERR |
                        getattr(select, "POLLRDHUP", 0))
    while (left := deadline - time.monotonic()) > 0:
        if poller:
            if poller.poll(int(min(0.5, left) * 1000)):
                return
            continue
        conn.sock.settimeout(max(0.01, min(0.5, left)))
        try:
            if not conn.sock.recv(PIECE):
                return
        except socket.timeout:
            pass
        except OSError:
            return

# ----------------------------------------------------------------------------- routes

ROUTES = {}

def route(path, own_body=False):
    """Registers a handler. Unless own_body, the request body is read before the handler runs."""
    def deco(fn):
        fn.own_body = own_body
        ROUTES[path] = fn
        return fn
    return deco

def parse_range(value, size):
    """`bytes=K-`, `bytes=K-L` or `bytes=-S` -> (start, end_exclusive); None if unusable."""
    m = re.fullmatch(r"bytes=(\d*)-(\d*)", (value or "").strip())
    if not m or not (m[1] or m[2]):
        return None
    if not m[1]:
        return max(0, size - int(m[2])), size
    return int(m[1]), size if not m[2] else min(size, int(m[2]) + 1)

@route("/close-after")
def close_after(conn, req):
    """200 with Content-Length M (length, default 4*bytes), or chunked (chunked=1); sends only the
    first N (bytes, default 1024) body bytes, then closes: mode=fin (default) or rst; mode=stall
    goes silent instead (until the client closes or max_s). With
    `Range: bytes=K-` (If-Range absent or equal to the ETag): 206 with bytes K..M-1, complete,
    keep-alive (416 if K >= M). Range with a mismatching If-Range: the complete 200, keep-alive."""
    n = req.qint("bytes", 1024)
    m = req.qint("length", 4 * n)
    etag = f'"fault-{m}"'
    hs = [("ETag", etag), ("Accept-Ranges", "bytes"), ("Content-Type", "application/octet-stream")]
    if_range = req.headers.get("if-range")
    rng = parse_range(req.headers.get("range"), m)
    if rng is not None and if_range in (None, etag):
        start, end = rng
        if start >= end:
            return respond(conn, req, 416, b"", hs + [("Content-Range", f"bytes */{m}")])
        send_head(conn, req, 206, hs + [("Content-Range", f"bytes {start}-{end - 1}/{m}"),
                                        ("Content-Length", end - start)])
        send_stream(conn, req, start, end)
        return KEEP
    if rng is not None or req.method == "HEAD":
        send_head(conn, req, 200, hs + [("Content-Length", m)])
        send_stream(conn, req, 0, m)
        return KEEP
    if req.qstr("chunked", "0") == "1":
        conn.send(make_head(200, hs + [("Transfer-Encoding", "chunked")]))
        pos = 0
        while pos < m:
            size = min(8192, m - pos)
            take = max(0, min(size, n - pos))
            conn.send(b"%x\r\n" % size + body_slice(pos, pos + take))
            if take < size:
                break                           # cut mid-chunk, no last-chunk
            conn.send(b"\r\n")
            pos += size
        else:
            conn.send(b"0\r\n\r\n")             # bytes >= length: a complete response
    else:
        conn.send(make_head(200, hs + [("Content-Length", m)]))
        send_stream(conn, req, 0, min(n, m))
    mode = req.qstr("mode", "fin")
    if mode == "stall":
        hold_open(conn, req, read=True)         # goes silent mid-body until the client gives up
        return CLOSE
    (rst_close if mode == "rst" else graceful_close)(conn.sock)
    return DONE

@route("/garbage-status")
def garbage_status(conn, req):
    """kind=status (default): `HTTP/1.1 abc Nonsense` head; kind=notHTTP: an SSH banner. Closes."""
    if req.qstr("kind", "status") == "notHTTP":
        conn.send(b"SSH-2.0-OpenSSH\r\n")
    else:
        conn.send(b"HTTP/1.1 abc Nonsense\r\nContent-Length: 0\r\n\r\n")
    return CLOSE

@route("/silence")
def silence(conn, req):
    """Reads the request (body too), never answers; holds until client close or max_s (60)."""
    hold_open(conn, req, read=True)
    return CLOSE

@route("/dribble-headers")
def dribble_headers(conn, req):
    """200 with body `hello`; the head is written one byte at a time, delay_ms (20) apart."""
    delay = req.qint("delay_ms", 20) / 1000.0
    head = make_head(200, [("Content-Type", "text/plain"), ("Content-Length", 5)] +
                     req.conn_headers())
    for i in range(len(head)):
        conn.send(head[i:i + 1])
        time.sleep(delay)
    if req.method != "HEAD":
        conn.send(b"hello")
    return KEEP

@route("/huge-headers")
def huge_headers(conn, req):
    """200 whose head has `X-Big:` with size (1 MiB) bytes of `a`; body `ok`."""
    return respond(conn, req, 200, b"ok", [("X-Big", "a" * req.qint("size", 1 << 20))])

def gzip_headers(decoded_length, content_type="application/octet-stream"):
    return [("Content-Type", content_type), ("Content-Encoding", "gzip"),
            ("X-Decoded-Length", decoded_length)]

@route("/gzip-bomb")
def gzip_bomb(conn, req):
    """gzip of size (1 GiB) zero bytes, mode=chunked (default) or length (Content-Length)."""
    size = req.qint("size", 1 << 30)
    data = gzip_zeros(size)
    if req.qstr("mode", "chunked") != "chunked":
        return respond(conn, req, 200, data, gzip_headers(size))
    send_head(conn, req, 200, gzip_headers(size) + [("Transfer-Encoding", "chunked")])
    if req.method != "HEAD":
        for i in range(0, len(data), PIECE):
            piece = data[i:i + PIECE]
            conn.send(b"%x\r\n" % len(piece) + piece + b"\r\n")
        conn.send(b"0\r\n\r\n")
    return KEEP

@route("/gzip-zeros")
def gzip_zeros_route(conn, req):
    """Legit compressible body: gzip of size (1 MiB) zero bytes, Content-Length."""
    size = req.qint("size", 1 << 20)
    return respond(conn, req, 200, gzip_zeros(size), gzip_headers(size))

JSON_ITEM = b'{"id":1,"name":"kite","tags":["a","b"],"active":true}'

@route("/gzip-json")
def gzip_json(conn, req):
    """gzip of a JSON array of count (1000) copies of JSON_ITEM joined by `,`, no spaces."""
    raw = b"[" + b",".join([JSON_ITEM] * req.qint("count", 1000)) + b"]"
    return respond(conn, req, 200, gzip_bytes(raw), gzip_headers(len(raw), "application/json"))

@route("/gzip-multi")
def gzip_multi(conn, req):
    """parts (3) gzip members concatenated (RFC 1952 multi-member); member i is the gzip of the
    deterministic body [i*size, (i+1)*size), size (1000); decodes to parts*size body bytes."""
    parts, size = req.qint("parts", 3), req.qint("size", 1000)
    data = b"".join(gzip_bytes(body_slice(i * size, (i + 1) * size)) for i in range(parts))
    return respond(conn, req, 200, data, gzip_headers(parts * size))

@route("/huge-body")
def huge_body(conn, req):
    """200, Content-Length size (10 MiB), deterministic body streamed in 64 KiB pieces. With id=K, the
    bytes the kernel has taken so far are counted under K (see /sent)."""
    size = req.qint("size", 10 << 20)
    key = req.qstr("id", "")
    send_head(conn, req, 200, [("Content-Type", "application/octet-stream"),
                               ("Content-Length", size)])
    if not key:
        send_stream(conn, req, 0, size)
        return KEEP
    for piece in body_pieces(0, size):
        conn.send(piece)
        with STATS_LOCK:
            SENT[key] = SENT.get(key, 0) + len(piece)
    return KEEP

@route("/sent")
def sent(conn, req):
    """200 JSON {"bytes": what /huge-body?id=K has handed the kernel so far} for id=K."""
    with STATS_LOCK:
        body = json.dumps({"bytes": SENT.get(req.qstr("id", ""), 0)}).encode()
    return respond(conn, req, 200, body, [("Content-Type", "application/json")])

@route("/redirect-loop")
def redirect_loop(conn, req):
    """302 to /redirect-loop?n=<n+1> (n default 0), forever."""
    return respond(conn, req, 302, b"", [("Location", f"/redirect-loop?n={req.qint('n', 0) + 1}")])

@route("/redirect-self")
def redirect_self(conn, req):
    """302 whose Location is the request target itself (path and query)."""
    return respond(conn, req, 302, b"", [("Location", req.target)])

@route("/redirect-scheme")
def redirect_scheme(conn, req):
    """302 with Location: <to> (default ftp://example.com/x), e.g. file:///etc/passwd."""
    return respond(conn, req, 302, b"", [("Location", req.qstr("to", "ftp://example.com/x"))])

@route("/bad-chunk")
def bad_chunk(conn, req):
    """Chunked 200 with an invalid chunk size: kind=letters (default, `zz`) or overflow
    (`FFFFFFFFFFFFFFFFFF`), then `hello` and a last-chunk. Then closes."""
    size = b"FFFFFFFFFFFFFFFFFF" if req.qstr("kind", "letters") == "overflow" else b"zz"
    conn.send(make_head(200, [("Transfer-Encoding", "chunked")]) +
              size + b"\r\nhello\r\n0\r\n\r\n")
    return CLOSE

@route("/cl-and-te")
def cl_and_te(conn, req):
    """200 with both Content-Length: 5 and Transfer-Encoding: chunked, chunked body `hello`."""
    send_head(conn, req, 200, [("Content-Length", 5), ("Transfer-Encoding", "chunked")])
    conn.send(b"5\r\nhello\r\n0\r\n\r\n")
    return KEEP

@route("/informational", own_body=True)
def informational(conn, req):
    """Sends the 1xx interim responses listed in codes (default 100,103; 103 carries
    `Link: </a>; rel=preload`), then reads the request body, then a final 200 `final`."""
    try:
        codes = [int(c) for c in req.qstr("codes", "100,103").split(",") if c.strip()]
    except ValueError:
        raise BadRequest(400, "codes must be integers")
    if any(not 100 <= c <= 199 for c in codes):
        raise BadRequest(400, "codes must be 1xx")
    for c in codes:
        conn.send(make_head(c, [("Link", "</a>; rel=preload")] if c == 103 else []))
    read_body(conn, req)
    return respond(conn, req, 200, b"final")

@route("/http10")
def http10(conn, req):
    """HTTP/1.0 200 without Content-Length: size (1000) deterministic bytes, then close."""
    conn.send(make_head(200, [("Content-Type", "application/octet-stream")], "HTTP/1.0"))
    send_stream(conn, req, 0, req.qint("size", 1000))
    return CLOSE

@route("/stop-reading", own_body=True)
def stop_reading(conn, req):
    """Reads the head only, never recv()s again and never answers; holds until the client closes
    or max_s (60). The client's upload stalls once the kernel buffers are full."""
    hold_open(conn, req, read=False)
    return CLOSE

EARLY_BODIES = {413: b"too large", 401: b"unauthorized"}

@route("/early-status", own_body=True)
def early_status(conn, req):
    """Answers status (413) right after the head, before reading any body byte. then=close
    (default): `Connection: close`, shutdown both ways and close without reading the body;
    then=drain: then read and discard the body, keep-alive."""
    status = req.qint("status", 413)
    body = EARLY_BODIES.get(status, reason(status).lower().encode())
    if req.qstr("then", "close") == "drain":
        respond(conn, req, status, body, [("Content-Type", "text/plain")])
        read_body(conn, req)
        return KEEP
    conn.send(make_head(status, [("Content-Type", "text/plain"), ("Content-Length", len(body)),
                                 ("Connection", "close")]) + body)
    try:
        conn.sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    conn.sock.close()
    return DONE

@route("/upload-ack", own_body=True)
def upload_ack(conn, req):
    """Reads the whole body (after a 100 Continue if asked), then 200 `{"received":<bytes>}`,
    keep-alive. early=1: 200 `{"early":true}` right after the head, then drains the body."""
    hs = [("Content-Type", "application/json")]
    if req.qstr("early", "0") == "1":
        respond(conn, req, 200, b'{"early":true}', hs)
        read_body(conn, req)
        return KEEP
    maybe_continue(conn, req)
    received = read_body(conn, req)
    return respond(conn, req, 200, b'{"received":%d}' % received, hs)

@route("/stray")
def stray(conn, req):
    """Bytes after a response that must not have them: kind=head (default; Content-Length 5 and
    body `XXXXX` for any method, HEAD too), 204 / 304 (then `stray bytes`), extra (`ok` then
    `garbage-after-body`). The connection stays open and further requests are still read."""
    conn.send({"204": b"HTTP/1.1 204 No Content\r\n\r\nstray bytes",
               "304": b"HTTP/1.1 304 Not Modified\r\n\r\nstray bytes",
               "extra": b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokgarbage-after-body"}
              .get(req.qstr("kind", "head"), b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nXXXXX"))
    return STAY

@route("/raw")
def raw(conn, req):
    """Sends the bytes base64url-encoded in b64 (padding optional) as the whole answer, then
    then=fin (default: FIN), rst (RST once the client has the bytes) or stay (read the next request)."""
    data = req.qstr("b64", "")
    try:
        payload = base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))
    except ValueError:
        raise BadRequest(400, "b64 must be base64url")
    conn.send(payload)
    then = req.qstr("then", "fin")
    if then == "rst":
        rst_close(conn.sock)
        return DONE
    return STAY if then == "stay" else CLOSE

@route("/many-fields")
def many_fields(conn, req):
    """A 200 with count (70000) header fields `a:` (one-letter name, empty value), then body `ok`."""
    conn.send(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n" + b"a:\r\n" * req.qint("count", 70000) + b"\r\nok")
    return KEEP

@route("/close-next")
def close_next(conn, req):
    """status (200) with body `ok` (and `Location: location` when given) without `Connection: close`; then
    reads the next request on the connection and closes it without a byte of an answer: how=fin (default) or rst. A stale keep-alive connection, made
    deterministic: the client writes its next request on a connection the server has given up."""
    location = req.qstr("location", "")
    respond(conn, req, req.qint("status", 200), b"ok",
            [("Content-Type", "text/plain")] + ([("Location", location)] if location else []))
    if conn.read_head() is None:
        return CLOSE
    with STATS_LOCK:
        STATS["requests"] += 1
    if req.qstr("how", "fin") == "rst":
        rst_close(conn.sock)
        return DONE
    return CLOSE

@route("/idle-close")
def idle_close(conn, req):
    """200 `ok` without `Connection: close`, then closes the connection if no next request arrives within
    ms (300) milliseconds: gunicorn's and nginx's keep-alive timeouts, short."""
    respond(conn, req, 200, b"ok", [("Content-Type", "text/plain")])
    ready, _, _ = select.select([conn.sock], [], [], req.qint("ms", 300) / 1000)
    if not ready and not conn.buf:
        return CLOSE
    return STAY

@route("/ok")
def ok(conn, req):
    """200 `ok`, keep-alive."""
    return respond(conn, req, 200, b"ok", [("Content-Type", "text/plain")])

@route("/stats")
def stats(conn, req):
    """200 JSON {"connections": accepted so far, "requests": heads parsed so far, this one too}."""
    with STATS_LOCK:
        body = json.dumps(STATS).encode()
    return respond(conn, req, 200, body, [("Content-Type", "application/json")])

# ----------------------------------------------------------------------------- hostile proxy

def connect_fault(conn, req):
    """A hostile HTTP proxy: the target host of a CONNECT, or of a request in absolute form
    (GET http://host/path, as plain http goes to a proxy), picks the misbehaviour (any port).
    proxy-407.test: 407 with a body, without Proxy-Authenticate; proxy-403.test: 403 refusal;
    proxy-silent.test: never answers; proxy-fin.test / proxy-rst.test: closes (FIN / RST) without
    answering; proxy-garbage.test: bytes that are not HTTP; proxy-body.test: 200 with a body, which a
    tunnel answer must not have (absolute form: 5 of the 100 bytes promised, then FIN);
    proxy-drop.test: 200, then closes the tunnel before any response (absolute form: a head
    promising 100 bytes, then RST)."""
    if req.method != "CONNECT":
        return forward_fault(conn, req, (urlsplit(req.target).hostname or "").lower())
    return proxy_fault(conn, req, req.target.rsplit(":", 1)[0].lower())

def proxy_fault(conn, req, host):
    """The misbehaviours a CONNECT and a request in absolute form share."""
    if host == "proxy-407.test":
        return respond(conn, req, 407, b"proxy says no", [("Connection", "close")]) and CLOSE
    if host == "proxy-403.test":
        return respond(conn, req, 403, b"forbidden target", [("Connection", "close")]) and CLOSE
    if host == "proxy-silent.test":
        hold_open(conn, req, read=True)
        return CLOSE
    if host == "proxy-fin.test":
        conn.send(b"HTTP/1.1 2")
        return CLOSE
    if host == "proxy-rst.test":
        rst_close(conn.sock)
        return DONE
    if host == "proxy-garbage.test":
        conn.send(b"\x16\x03\x01 not http at all\r\n\r\n")
        return CLOSE
    if host == "proxy-body.test":
        conn.send(make_head(200, [("Content-Length", 5)]) + b"hello")
        return CLOSE
    if host == "proxy-drop.test":
        conn.send(make_head(200, []))
        return CLOSE
    return respond(conn, req, 502, b"unknown proxy fault", [("Connection", "close")]) and CLOSE

def forward_fault(conn, req, host):
    """connect_fault's misbehaviours for a request in absolute form."""
    if host == "proxy-body.test":
        conn.send(make_head(200, [("Content-Length", 100)]) + b"hello")
        return CLOSE
    if host == "proxy-drop.test":
        conn.send(make_head(200, [("Content-Length", 100)]))
        rst_close(conn.sock)
        return DONE
    return proxy_fault(conn, req, host)

def not_found(conn, req):
    return respond(conn, req, 404, f"not found: {req.path}\n".encode(),
                   [("Content-Type", "text/plain")])

not_found.own_body = False
connect_fault.own_body = False

# ----------------------------------------------------------------------------- server

def serve_connection(sock):
    conn, action = Conn(sock), CLOSE
    try:
        while True:
            try:
                head = conn.read_head()
                if head is None:
                    break
                req = Request(head)
                with STATS_LOCK:
                    STATS["requests"] += 1
                log(req.method, req.target)
                handler = (connect_fault if req.method == "CONNECT" or req.target.startswith("http://")
                           else ROUTES.get(req.path, not_found))
                if not handler.own_body:
                    maybe_continue(conn, req)
                    read_body(conn, req)
                action = handler(conn, req)
            except BadRequest as e:
                body = f"{e}\n".encode()
                conn.send(make_head(e.status, [("Content-Length", len(body)),
                                               ("Connection", "close")]) + body)
                action = CLOSE
            if action in (CLOSE, DONE) or (action == KEEP and not req.keep_alive):
                break
    except (ClientGone, OSError) as e:          # resets, broken pipes, timeouts: drop quietly
        log("connection dropped:", e)
    except Exception as e:                      # a handler bug must not take the server down
        print(f"fault_server: handler error: {e!r}", file=sys.stderr, flush=True)
    finally:
        if action != DONE:
            graceful_close(sock)

def main():
    global VERBOSE
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--no-stdin-watch", action="store_true", help="do not exit on stdin EOF")
    ap.add_argument("--verbose", action="store_true", help="log requests to stderr")
    args = ap.parse_args()
    VERBOSE = args.verbose
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    signal.signal(signal.SIGINT, lambda *_: os._exit(0))

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", args.port))
    listener.listen(512)
    print(f"PORT {listener.getsockname()[1]}", flush=True)

    def watch_stdin():
        try:
            while os.read(0, 65536):
                pass
        except OSError:
            pass
        os._exit(0)

    if not args.no_stdin_watch:
        threading.Thread(target=watch_stdin, name="stdin-watch", daemon=True).start()
    while True:
        try:
            sock, _ = listener.accept()
        except OSError as e:                    # e.g. EMFILE: back off instead of spinning
            log("accept failed:", e)
            time.sleep(0.05)
            continue
        with STATS_LOCK:
            STATS["connections"] += 1
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass
        threading.Thread(target=serve_connection, args=(sock,), daemon=True).start()

if __name__ == "__main__":
    main()
