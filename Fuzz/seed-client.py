#!/usr/bin/env python3
"""Seeds for the whole-client fuzz targets (`client`, `clientHTTP2`), made from real servers' answers.

Asks each running server the requests below over a raw socket, records the exact bytes (HTTP/1.1) or frames
(HTTP/2) it answers with, and writes each as an input in the targets' format (Fuzz/Sources/KiteFuzz/ClientPlan.swift):
four header bytes that choose Kite's request, then the conversation the fake server plays back.

    Fuzz/seed-client.py --httpbin 127.0.0.1:8090 --nginx 127.0.0.1:8443 --nginx-h2 127.0.0.1:8444 \\
        --squid 127.0.0.1:3128 --kite 127.0.0.1:8080

Any server may be left out. Inputs are at most 4,096 bytes (the targets' -max_len): longer answers are cut there,
which is itself a hostile answer worth keeping.
"""
import argparse
import hashlib
import os
import socket
import ssl
import struct

MAX_LEN = 4096
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "Corpus")

# Kinds (byte 0): get, head, post, put, download, lines, events, delete.
GET, HEAD, POST, PUT, DOWNLOAD, LINES, EVENTS, DELETE = range(8)
# Byte 1 flags.
REDIRECTS, CREDENTIAL, COOKIES, MEMORY_CACHE, DISK_CACHE, NO_DECOMPRESSION, RETRY, VALIDATE = (1 << i for i in range(8))
# Byte 2 flags.
NO_AUTOMATIC_HTTP2 = 0x08


def header(kind, flags=0, flags2=0, cancel=0):
    return bytes([kind, flags, flags2, cancel])


def send_steps(data):
    """0x09 records (two-byte lengths) holding `data`."""
    out = b""
    for start in range(0, len(data), 0xFFFF):
        piece = data[start:start + 0xFFFF]
        out += b"\x09" + struct.pack(">H", len(piece)) + piece
    return out


def write_seed(target, name, data):
    folder = os.path.join(ROOT, target)
    os.makedirs(folder, exist_ok=True)
    data = data[:MAX_LEN]
    digest = hashlib.sha1(data).hexdigest()
    with open(os.path.join(folder, f"seed-{name}-{digest[:12]}"), "wb") as f:
        f.write(data)


def http1_exchange(address, request, use_tls=False):
    host, port = address.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=5)
    if use_tls:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        sock = context.wrap_socket(sock)
    sock.sendall(request)
    chunks = []
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                break
            chunks.append(data)
    except socket.timeout:
        pass
    sock.close()
    return b"".join(chunks)


def http1_seeds(name, address, requests):
    for label, method, path, extra, kinds in requests:
        request = f"{method} {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n{extra}\r\n".encode()
        answer = http1_exchange(address, request)
        if not answer:
            print(f"{name} {label}: no answer")
            continue
        for kind, flags in kinds:
            # Wait for the request, play the answer, close; and a second connection answering the same, for
            # redirects, retries and challenges.
            conversation = b"\x06" + send_steps(answer) + b"\x03\x05\x06" + send_steps(answer)
            write_seed("client", f"{name}-{label}-{kind}", header(kind, flags) + conversation)
        print(f"{name} {label}: {len(answer)} bytes")


# HTTP/2 by hand: the preface, SETTINGS, and one HEADERS whose block uses HPACK's static table and literals.
def h2_frame(type_, flags, stream, payload):
    return struct.pack(">I", len(payload))[1:] + bytes([type_, flags]) + struct.pack(">I", stream) + payload


def hpack_literal(name, value):
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value


def http2_exchange(address, method, path):
    host, port = address.rsplit(":", 1)
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.set_alpn_protocols(["h2"])
    sock = context.wrap_socket(socket.create_connection((host, int(port)), timeout=5))
    if sock.selected_alpn_protocol() != "h2":
        raise SystemExit(f"{address} did not agree to h2")
    block = (hpack_literal(b":method", method) + hpack_literal(b":scheme", b"https") +
             hpack_literal(b":path", path) + hpack_literal(b":authority", address.encode()) +
             hpack_literal(b"accept-encoding", b"gzip"))
    sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + h2_frame(0x4, 0, 0, b"") + h2_frame(0x1, 0x5, 1, block))
    frames, buffer, ended = [], b"", False
    try:
        while not ended:
            data = sock.recv(65536)
            if not data:
                break
            buffer += data
            while len(buffer) >= 9:
                length = int.from_bytes(buffer[:3], "big")
                if len(buffer) < 9 + length:
                    break
                type_, flags = buffer[3], buffer[4]
                stream = int.from_bytes(buffer[5:9], "big") & 0x7FFFFFFF
                frames.append((type_, flags, stream, buffer[9:9 + length]))
                buffer = buffer[9 + length:]
                if stream == 1 and flags & 0x1 and type_ in (0x0, 0x1):
                    ended = True
    except socket.timeout:
        pass
    sock.close()
    return frames


def http2_seeds(name, address, requests):
    for label, method, path, kind in requests:
        frames = http2_exchange(address, method.encode(), path.encode())
        conversation, waited = b"", False
        for type_, flags, stream, payload in frames:
            if stream != 0 and not waited:
                conversation += b"\x06"
                waited = True
            reference = 0 if stream == 0 else 1
            conversation += b"\x10" + bytes([type_, flags, reference]) + struct.pack(">H", len(payload)) + payload
        write_seed("clientHTTP2", f"{name}-{label}", header(kind, 0, NO_AUTOMATIC_HTTP2) + conversation)
        print(f"{name} h2 {label}: {len(frames)} frames")


def hostile_seeds():
    """Answers no server should send, among them each that once trapped in the engine (RELIABILITY.md)."""
    h1 = {
        "status-099": b"HTTP/1.1 099 X\r\nContent-Length: 3\r\n\r\nabc",
        "status-000": b"HTTP/1.1 000 Zero\r\n\r\n",
        "unsolicited-101": b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\nnot http",
        "interim": b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
        "redirect-port": b"HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:99999/x\r\nContent-Length: 0\r\n\r\n",
        "redirect-percent-host": b"HTTP/1.1 302 Found\r\nLocation: http://%5D/\r\nContent-Length: 0\r\n\r\n",
        "cl-te": b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        "two-lengths": b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
        "204-body": b"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\nhello",
        "gzip-bad": b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 10\r\n\r\n\x1f\x8b\x08\x00garbage",
        "disposition": b"HTTP/1.1 200 OK\r\nContent-Disposition: attachment; filename*=UTF-8''..%2F..%2Fetc%2Fpasswd\r\nContent-Length: 2\r\n\r\nok",
        "digest": b'HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Digest realm="r", nonce="n", qop="auth", algorithm=SHA-256\r\nContent-Length: 0\r\n\r\n',
        "set-cookie": b"HTTP/1.1 302 Found\r\nSet-Cookie: a=1; Path=/; Max-Age=60\r\nLocation: /\r\nContent-Length: 0\r\n\r\n",
        "sse": b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\nretry: 1\r\nid: 1\r\ndata: a\r\n\r\ndata: b\n\n",
        "chunked-cut": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc",
    }
    for name, answer in h1.items():
        for kind, flags in [(GET, REDIRECTS | CREDENTIAL | COOKIES), (DOWNLOAD, REDIRECTS), (EVENTS, 0),
                            (PUT, RETRY), (GET, MEMORY_CACHE | VALIDATE)]:
            write_seed("client", f"hostile-{name}-{kind}",
                       header(kind, flags) + b"\x06" + send_steps(answer) + b"\x03\x05\x06" + send_steps(answer))
    # The same answer on a reused connection closed before it answers (RST), and an answer before the request.
    write_seed("client", "hostile-stale", header(GET, 0, 0x02) + b"\x06" + send_steps(h1["interim"]) + b"\x06\x04")
    write_seed("client", "hostile-early", header(PUT, 0) + send_steps(h1["status-099"]) + b"\x07")
    # Silence: none at all, and a body stalled after its first bytes (the idle-read timeout's paths).
    write_seed("client", "hostile-silent", header(GET, RETRY) + b"\x06\x0a")
    write_seed("client", "hostile-stall", header(DOWNLOAD, 0) + b"\x06" +
               send_steps(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nETag: \"x\"\r\n\r\n0123456789") + b"\x0a")

    def headers(fields, flags=0x4, stream=1):
        body = b"".join(bytes([len(n)]) + n + bytes([len(v)]) + v for n, v in fields)
        return b"\x11" + bytes([stream, flags, len(fields)]) + body

    def frame(type_, flags, stream, payload):
        return b"\x10" + bytes([type_, flags, stream]) + struct.pack(">H", len(payload)) + payload

    h2 = {
        "status-empty": headers([(b":status", b"")], 0x5),
        "status-negative": headers([(b":status", b"-1")], 0x5),
        "status-099": headers([(b":status", b"099"), (b"content-length", b"2")]) + frame(0, 1, 1, b"ok"),
        "status-101-then-200": headers([(b":status", b"101")]) + headers([(b":status", b"200")], 0x5),
        "interim-end": headers([(b":status", b"100")], 0x5),
        "push-before-ack": frame(5, 0x4, 1, b"\x00\x00\x00\x02" + b"\x82\x87\x84") + frame(3, 0, 3, b"\x00\x00\x00\x08")
        + headers([(b":status", b"200")], 0x5),
        "window-shrink": frame(4, 0, 0, b"\x00\x04\x00\x00\x00\x00") + headers([(b":status", b"200")], 0x5),
        "goaway": frame(7, 0, 0, b"\x00\x00\x00\x00\x00\x00\x00\x00"),
        "rst": frame(3, 0, 1, b"\x00\x00\x00\x07"),
        "204-data": headers([(b":status", b"204")]) + frame(0, 1, 1, b"hello"),
        "data-before-headers": frame(0, 1, 1, b"hello"),
        "many": headers([(b":status", b"200"), (b"set-cookie", b"a=1"), (b"content-encoding", b"gzip")])
        + frame(0, 1, 1, b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00"),
    }
    for name, frames in h2.items():
        for kind, flags in [(GET, REDIRECTS | COOKIES), (DOWNLOAD, 0), (PUT, 0), (LINES, 0)]:
            write_seed("clientHTTP2", f"hostile-{name}-{kind}", header(kind, flags) + b"\x06" + frames)
    write_seed("clientHTTP2", "hostile-push-before-ack-manual",
               header(GET, 0, NO_AUTOMATIC_HTTP2) + frame(4, 0, 0, b"") + b"\x06" + h2["push-before-ack"])
    print(f"hostile: {len(h1) * 5 + 2} HTTP/1.1 and {len(h2) * 4 + 1} HTTP/2 seeds")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for server in ("httpbin", "nginx", "nginx-h2", "squid", "kite"):
        ap.add_argument(f"--{server}")
    args = ap.parse_args()
    hostile_seeds()
    everyday = [(GET, 0), (GET, VALIDATE | COOKIES), (DOWNLOAD, 0), (LINES, 0), (EVENTS, 0), (HEAD, 0),
                (GET, MEMORY_CACHE | DISK_CACHE), (POST, RETRY)]
    if args.httpbin:
        http1_seeds("httpbin", args.httpbin, [
            ("get", "GET", "/get?q=1", "", everyday),
            ("gzip", "GET", "/gzip", "", [(GET, 0), (GET, NO_DECOMPRESSION), (DOWNLOAD, 0)]),
            ("deflate", "GET", "/deflate", "", [(GET, 0)]),
            ("redirect", "GET", "/redirect/2", "", [(GET, REDIRECTS), (DOWNLOAD, REDIRECTS)]),
            ("absolute-redirect", "GET", "/absolute-redirect/1", "", [(GET, REDIRECTS)]),
            ("basic", "GET", "/basic-auth/kite/fuzz", "", [(GET, CREDENTIAL)]),
            ("digest", "GET", "/digest-auth/auth/kite/fuzz", "", [(GET, CREDENTIAL), (DOWNLOAD, CREDENTIAL)]),
            ("cookies", "GET", "/cookies/set?a=1&b=2", "", [(GET, COOKIES | REDIRECTS)]),
            ("cache", "GET", "/cache/60", "", [(GET, MEMORY_CACHE), (GET, DISK_CACHE)]),
            ("etag", "GET", "/etag/kite", "", [(GET, MEMORY_CACHE | DISK_CACHE)]),
            ("status-503", "GET", "/status/503", "", [(GET, RETRY), (DELETE, RETRY | VALIDATE)]),
            ("status-418", "GET", "/status/418", "", [(GET, VALIDATE)]),
            ("stream", "GET", "/stream/5", "", [(LINES, 0), (GET, 0)]),
            ("drip", "GET", "/drip?numbytes=5&duration=0&delay=0", "", [(LINES, 0)]),
            ("bytes", "GET", "/bytes/2048", "", [(DOWNLOAD, 0), (GET, 0)]),
            ("range", "GET", "/range/1024", "Range: bytes=10-99\r\n", [(DOWNLOAD, 0)]),
            ("headers", "GET", "/response-headers?Content-Disposition=attachment%3B%20filename%3D%22..%2F..%2Fx%22",
             "", [(DOWNLOAD, 0)]),
            ("post", "POST", "/post", "Content-Length: 4\r\n\r\nkite", [(POST, 0), (PUT, 0)]),
        ])
    if args.nginx:
        http1_seeds("nginx", args.nginx, [
            ("index", "GET", "/", "", everyday),
            ("404", "GET", "/nothing-here", "", [(GET, VALIDATE), (DOWNLOAD, 0)]),
            ("405", "POST", "/", "Content-Length: 0\r\n", [(POST, 0)]),
            ("range", "GET", "/", "Range: bytes=0-9\r\n", [(DOWNLOAD, 0)]),
            ("not-modified", "GET", "/", "If-None-Match: *\r\n", [(GET, MEMORY_CACHE)]),
            ("bad", "GET", "/%", "", [(GET, 0)]),
        ])
    if args.nginx_h2:
        http2_seeds("nginx", args.nginx_h2, [
            ("index", "GET", "/", GET), ("index-download", "GET", "/", DOWNLOAD), ("404", "GET", "/nothing", GET),
            ("head", "HEAD", "/", HEAD),
        ])
    if args.squid:
        http1_seeds("squid", args.squid, [
            ("connect-fail", "GET", "http://127.0.0.1:1/", "", [(GET, 0), (GET, RETRY | VALIDATE), (DOWNLOAD, 0)]),
            ("dns-fail", "GET", "http://kite-fuzz.invalid/", "", [(GET, 0), (LINES, 0)]),
            ("connect-denied", "CONNECT", "127.0.0.1:22", "", [(GET, 0)]),
        ])
    if args.kite:
        http1_seeds("kite", args.kite, [
            ("get", "GET", "/get", "", everyday),
            ("sse", "GET", "/sse?count=3", "", [(EVENTS, 0), (LINES, 0)]),
            ("gzip", "GET", "/gzip", "", [(GET, 0)]),
            ("redirect", "GET", "/redirect/1", "", [(GET, REDIRECTS)]),
            ("digest", "GET", "/digest-auth/auth/kite/fuzz", "", [(GET, CREDENTIAL)]),
            ("stream", "GET", "/stream/3", "", [(LINES, 0)]),
            ("cache", "GET", "/cache/60", "", [(GET, MEMORY_CACHE | DISK_CACHE)]),
        ])


if __name__ == "__main__":
    main()
