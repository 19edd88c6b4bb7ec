#!/usr/bin/python3
"""A tiny S3 stand-in on loopback for the s3 engine's failure paths (tests/cli_s3.sh).

    s3_fault_server.py MODE SIZE PORTFILE LOGFILE

serves one object of SIZE bytes (byte i = i % 251) at any path: HEAD gives its size, a ranged
GET its bytes.  MODE: slowdown:N answers the first N GETs with 503 SlowDown; short answers every
GET with half the range asked for (and a Content-Length that says so); capture answers PUT and
the multipart POSTs as S3 would and writes each request (method, path, headers) to LOGFILE as
one JSON line, for checking its signature with botocore.  Otherwise each GET's Range and status
go to LOGFILE, one line each.  The port it listens on is written to PORTFILE.
"""
import http.server
import json
import os
import sys

MODE, SIZE, PORTFILE, LOGFILE = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
state = {"gets": 0}


def body(lo, hi):
    return bytes(i % 251 for i in range(lo, hi + 1))


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def capture(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n) if n else b""
        with open(LOGFILE, "a") as f:
            f.write(json.dumps({"method": self.command, "path": self.path,
                                "headers": dict(self.headers.items()),
                                "body_len": len(body)}) + "\n")
        return body

    def reply(self, status, data=b"", etag=None):
        self.send_response(status)
        if etag:
            self.send_header("ETag", etag)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_PUT(self):
        self.capture()
        self.reply(200, etag='"%032x"' % len(self.path))

    def do_POST(self):
        self.capture()
        if self.path.endswith("?uploads="):
            self.reply(200, b"<InitiateMultipartUploadResult><UploadId>up/1+x=</UploadId>"
                            b"</InitiateMultipartUploadResult>")
        else:
            self.reply(200, b"<CompleteMultipartUploadResult></CompleteMultipartUploadResult>")

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", str(SIZE))
        self.end_headers()

    def do_GET(self):
        state["gets"] += 1
        rng = self.headers.get("Range", "")
        lo, hi = (int(x) for x in rng.split("=")[1].split("-"))
        status = 206
        if MODE.startswith("slowdown:") and state["gets"] <= int(MODE.split(":")[1]):
            status = 503
            data = b"<Error><Code>SlowDown</Code><Message>Reduce your request rate.</Message></Error>"
        elif MODE == "short":
            data = body(lo, lo + (hi - lo + 1) // 2 - 1)
        else:
            data = body(lo, hi)
        with open(LOGFILE, "a") as f:
            f.write("%s %d\n" % (rng, status))
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(PORTFILE + ".tmp", PORTFILE)
srv.serve_forever()
