#!/usr/bin/python3
"""A pass-through in front of the S3 server the s3 tests start (tests/s3_server.sh).

    s3_sign_proxy.py BACKEND_PORT PORTFILE LOGFILE

listens on 127.0.0.1 (its port written to PORTFILE), writes every request it gets (method, path,
headers) to LOGFILE as one JSON line, and forwards it as it came to the server on
127.0.0.1:BACKEND_PORT, whose answer it hands back.  tests/s3_resign.py then signs every logged
request again with botocore: every request a test run sends is checked against a second SigV4
signer, whichever server answers (neither s3rver nor fauxqs checks a signature).
"""
import http.client
import http.server
import json
import os
import sys

BACKEND, PORTFILE, LOGFILE = int(sys.argv[1]), sys.argv[2], sys.argv[3]
HOP = ("connection", "keep-alive", "transfer-encoding", "expect", "content-length")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def forward(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n) if n else b""
        with open(LOGFILE, "a") as f:
            f.write(json.dumps({"method": self.command, "path": self.path,
                                "headers": dict(self.headers.items())}) + "\n")
        hdrs = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
        hdrs["Content-Length"] = str(len(body))
        conn = http.client.HTTPConnection("127.0.0.1", BACKEND, timeout=120)
        try:
            conn.request(self.command, self.path, body=body, headers=hdrs)
            r = conn.getresponse()
            data = r.read()
        except OSError:
            self.close_connection = True  # the server went away: so does this connection
            return
        finally:
            conn.close()
        self.send_response(r.status, r.reason)
        for k, v in r.getheaders():
            if k.lower() not in HOP:
                self.send_header(k, v)
        # a HEAD's Content-Length is the object's size, not this (empty) body's
        self.send_header("Content-Length", r.getheader("Content-Length", "0")
                         if self.command == "HEAD" else str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = forward


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
srv.daemon_threads = True
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(PORTFILE + ".tmp", PORTFILE)
srv.serve_forever()
