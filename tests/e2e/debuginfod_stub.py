#!/usr/bin/env python3
"""A misbehaving debuginfod server on 127.0.0.1, for tests/e2e/symbols_debuginfod_limits.sh.

    debuginfod_stub.py MODE PORTFILE LOG [LIFETIME]

MODE endless: answers every request "200 OK" with no Content-Length and a
body of zeros that never ends (what filled a cache with 13 GB).
MODE huge: the same, stating a size of 10 GiB (Content-Length), as a
real server does for a file over the client's limit.
MODE silent: accepts every connection, reads the request and says nothing.

It listens on a free port chosen by the kernel, writes the port to PORTFILE
once it listens, logs each request line to LOG, and exits by itself after
LIFETIME seconds (default 60), so that a test killed midway leaves no
server behind.
"""
import os
import socket
import sys
import threading
import time

mode, portfile, logpath = sys.argv[1], sys.argv[2], sys.argv[3]
lifetime = float(sys.argv[4]) if len(sys.argv) > 4 else 60.0
deadline = time.monotonic() + lifetime
log_lock = threading.Lock()


def log(line):
    with log_lock, open(logpath, "a") as f:
        f.write(line + "\n")


def read_request(conn):
    data = b""
    while b"\r\n\r\n" not in data and len(data) < 65536:
        chunk = conn.recv(4096)
        if not chunk:
            break
        data += chunk
    return data.split(b"\r\n", 1)[0].decode("latin-1")


def serve(conn):
    try:
        conn.settimeout(max(0.1, deadline - time.monotonic()))
        line = read_request(conn)
        log(line)
        if mode in ("endless", "huge"):
            size = b"Content-Length: %d\r\n" % (10 << 30) if mode == "huge" else b""
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n" +
                         size + b"Connection: close\r\n\r\n")
            zeros = bytes(65536)
            while time.monotonic() < deadline:
                conn.sendall(zeros)
        else:
            while time.monotonic() < deadline:
                time.sleep(0.1)
    except OSError:
        pass
    finally:
        conn.close()


def main():
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    srv.settimeout(0.2)
    tmp = portfile + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.getsockname()[1])
    os.rename(tmp, portfile)
    while time.monotonic() < deadline:
        try:
            conn, _ = srv.accept()
        except socket.timeout:
            continue
        threading.Thread(target=serve, args=(conn,), daemon=True).start()
    os._exit(0)


main()
