#!/usr/bin/env python3
"""A stand-in debuginfod server for tests: serves one debug file at
/buildid/BUILD_ID/debuginfo on 127.0.0.1, 404 for anything else, prints its
port on stdout and logs each request path to LOG.
Usage: debuginfod_server.py BUILD_ID DEBUG_FILE LOG"""
import http.server
import sys

build_id, debug_file, log = sys.argv[1:4]


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(log, "a") as f:
            f.write(self.path + "\n")
        if self.path != f"/buildid/{build_id}/debuginfo":
            self.send_response(404)
            self.end_headers()
            return
        with open(debug_file, "rb") as f:
            data = f.read()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
print(server.server_port, flush=True)
server.serve_forever()
