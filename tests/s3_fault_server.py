#!/usr/bin/python3
"""A tiny S3 stand-in on loopback for the s3 engine's failure paths (tests/cli_s3.sh,
tests/cli_s3_hostile.sh).

    s3_fault_server.py MODE SIZE PORTFILE LOGFILE

serves one object of SIZE bytes (byte i = i % 251) at any path: HEAD gives its size, a ranged
GET its bytes (206 with its Content-Range).  The port it listens on is written to PORTFILE.  It
listens on 127.0.0.1 only, and ends by itself after S3_FAULT_LIFETIME seconds (default 300) if
the test that started it (and stops it by its pid) did not.

MODE: slowdown:N answers the first N GETs with 503 SlowDown; short answers every GET with half
the range asked for (and a Content-Length that says so); capture answers PUT and the multipart
POSTs as S3 would and writes each request (method, path, headers) to LOGFILE as one JSON line,
for checking its signature with botocore.  Otherwise each request goes to LOGFILE, one line
each ("GET path range status", "HEAD path status", ...).

The hostile modes (tests/cli_s3_hostile.sh), one per way a server can mislead a client:
  redirect        every request: 307 to the same path on another listener, "the other host"
                  (127.0.0.2, or another port), which logs "OTHER method path token=..."
  redirect-get    HEAD answers; GETs are redirected to the other host
  redirect-ftp    every request: 307 to ftp:// on the other listener
  redirect-loop   every request: 307 to itself
  etag            capture, with an ETag on each part that is XML markup; a POST's body logged
  no-uploadid     the multipart initiate answers 200 without an <UploadId>
  hang-complete   capture, but the multipart complete is never answered
  list-dotdot     a listing of p/ that names p/../q/obj
  list-outside    a listing of p/ that names other/obj
  list-crlf       a listing of p/ that names "p/cut\\r\\nobj" (as XML character references)
  list-long       a listing of p/a, a key of 1024 bytes, p/z
  list-loop       a truncated listing that answers its continuation token with itself
  list-repeat     a truncated listing that gives the same page under new tokens
  list-huge       a listing page of 20 MiB
  list-many:N     N objects under p/, 1000 to a page
  hang-head       a HEAD that is never answered
  hang-get        HEAD answers; a GET is never answered
  drip            a GET's headers, then its body at 1 byte a second
  slow:R          a GET's body at R bytes a second
  range200        a ranged GET answered 200 with the object from its start
  range-wrong     a ranged GET answered 206 with the bytes (and Content-Range) one further
  long-body       a ranged GET answered with more bytes than asked
  head-nolen      a HEAD answered without a Content-Length
  head503:N       the first N HEADs answered 503 SlowDown
"""
import http.server
import json
import os
import sys
import threading
import time

MODE, SIZE, PORTFILE, LOGFILE = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
state = {"gets": 0, "heads": 0, "other": None}
lock = threading.Lock()
SLOWDOWN = b"<Error><Code>SlowDown</Code><Message>Reduce your request rate.</Message></Error>"


def body(lo, hi):
    return bytes(i % 251 for i in range(lo, hi + 1))


def log(line):
    with lock, open(LOGFILE, "a") as f:
        f.write(line + "\n")


def listing(keys, token=None):
    x = "<ListBucketResult><IsTruncated>%s</IsTruncated>" % ("true" if token else "false")
    for k in keys:
        x += "<Contents><Key>%s</Key><Size>%d</Size></Contents>" % (k, SIZE)
    if token:
        x += "<NextContinuationToken>%s</NextContinuationToken>" % token
    return (x + "</ListBucketResult>").encode()


def hang():
    time.sleep(3600)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def capture(self):
        n = int(self.headers.get("Content-Length", "0"))
        data = self.rfile.read(n) if n else b""
        rec = {"method": self.command, "path": self.path,
               "headers": dict(self.headers.items()), "body_len": len(data)}
        if MODE == "etag" and self.command == "POST":
            rec["body"] = data.decode("utf-8", "replace")
        log(json.dumps(rec))
        return data

    def reply(self, status, data=b"", etag=None, headers=()):
        self.send_response(status)
        if etag:
            self.send_header("ETag", etag)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def redirected(self):
        """Answers with a redirect when the mode says so; True then."""
        other = state["other"]
        to = None
        if MODE == "redirect" or (MODE == "redirect-get" and self.command == "GET"):
            to = "http://%s:%d%s" % (other[0], other[1], self.path)
        elif MODE == "redirect-ftp":
            to = "ftp://%s:%d/x" % other
        elif MODE == "redirect-loop":
            to = "http://127.0.0.1:%d%s" % (self.server.server_address[1], self.path)
        if not to:
            return False
        log("REDIRECT %s %s" % (self.command, self.path))
        self.reply(307, headers=[("Location", to)])
        return True

    def do_PUT(self):
        self.capture()
        if MODE == "etag":
            self.reply(200, etag='"x</ETag></Part><Part><PartNumber>7</PartNumber><ETag>y"')
        else:
            self.reply(200, etag='"%032x"' % len(self.path))

    def do_POST(self):
        self.capture()
        if self.path.endswith("?uploads="):
            if MODE == "no-uploadid":
                self.reply(200, b"<InitiateMultipartUploadResult></InitiateMultipartUploadResult>")
            else:
                self.reply(200, b"<InitiateMultipartUploadResult><UploadId>up/1+x=</UploadId>"
                                b"</InitiateMultipartUploadResult>")
        elif MODE == "hang-complete":
            hang()
        else:
            self.reply(200, b"<CompleteMultipartUploadResult></CompleteMultipartUploadResult>")

    def do_DELETE(self):
        self.capture()
        self.reply(204)

    def do_HEAD(self):
        state["heads"] += 1
        if self.redirected():
            return
        log("HEAD %s" % self.path)
        if MODE == "hang-head":
            hang()
        if MODE.startswith("head503:") and state["heads"] <= int(MODE.split(":")[1]):
            return self.reply(503)
        self.send_response(200)
        if MODE != "head-nolen":
            self.send_header("Content-Length", str(SIZE))
        self.end_headers()

    def do_GET(self):
        if self.redirected():
            return
        if "list-type=2" in self.path:
            return self.list()
        state["gets"] += 1
        rng = self.headers.get("Range", "")
        lo, hi = (int(x) for x in rng.split("=")[1].split("-"))
        status = 206
        if MODE.startswith("slowdown:") and state["gets"] <= int(MODE.split(":")[1]):
            status = 503
            data = SLOWDOWN
        elif MODE == "short":
            data = body(lo, lo + (hi - lo + 1) // 2 - 1)
        elif MODE == "range200":
            status, lo, hi = 200, 0, SIZE - 1
            data = body(lo, hi)
        elif MODE == "range-wrong":
            lo, hi = lo + 1, hi + 1
            data = body(lo, hi)
        elif MODE == "long-body":
            data = body(lo, hi + 100)
        else:
            data = body(lo, hi)
        log("GET %s %s %d" % (self.path, rng, status))
        if MODE == "hang-get":
            hang()
        self.send_response(status)
        if status == 206:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (lo, hi, SIZE))
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if MODE == "drip" or MODE.startswith("slow:"):
            rate = 1 if MODE == "drip" else int(MODE.split(":")[1])
            step = max(1, rate // 10)
            for i in range(0, len(data), step):
                self.wfile.write(data[i:i + step])
                self.wfile.flush()
                time.sleep(step / rate)
            return
        self.wfile.write(data)

    def list(self):
        q = dict(p.split("=", 1) for p in self.path.split("?", 1)[1].split("&"))
        token = q.get("continuation-token", "")
        log("LIST %s token=%s" % (self.path, token))
        if MODE == "list-dotdot":
            data = listing(["p/../q/obj"])
        elif MODE == "list-outside":
            data = listing(["other/obj"])
        elif MODE == "list-crlf":
            data = listing(["p/cut&#13;&#10;obj"])
        elif MODE == "list-long":
            data = listing(["p/a", "p/" + "k" * 1022, "p/z"])
        elif MODE == "list-loop":
            data = listing([] if token else ["p/a"], "same")
        elif MODE == "list-repeat":
            data = listing(["p/a"], "t%d" % (int(token[1:] or "0") + 1))
        elif MODE == "list-huge":
            self.send_response(200)
            self.send_header("Content-Length", str(20 << 20))
            self.end_headers()
            self.wfile.write(b"<ListBucketResult>")
            chunk = b"<Contents><Key>p/a</Key></Contents>" * 1000
            sent = 18
            while sent + len(chunk) <= 20 << 20:
                self.wfile.write(chunk)
                sent += len(chunk)
            return
        elif MODE.startswith("list-many:"):
            n = int(MODE.split(":")[1])
            first = int(token or "0")
            last = min(n, first + 1000)
            data = listing(["p/%08d" % i for i in range(first, last)],
                           str(last) if last < n else None)
        else:
            data = listing(["p/a"])
        self.reply(200, data)


class Other(http.server.BaseHTTPRequestHandler):
    """The host a redirect points to: it logs what reached it, credentials included."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def any(self):
        log("OTHER %s %s token=%s auth=%s" % (self.command, self.path,
                                              self.headers.get("x-amz-security-token"),
                                              self.headers.get("Authorization")))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_HEAD = do_PUT = do_POST = any


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client that hangs up on a hostile answer is what the tests want


def other_server():
    for host in ("127.0.0.2", "127.0.0.1"):
        try:
            return Server((host, 0), Other)
        except OSError:
            continue
    raise OSError("no loopback address for the other host")


lifetime = threading.Timer(float(os.environ.get("S3_FAULT_LIFETIME", "300")), os._exit, (0,))
lifetime.daemon = True
lifetime.start()
other = other_server()
state["other"] = other.server_address[:2]
threading.Thread(target=other.serve_forever, daemon=True).start()
srv = Server(("127.0.0.1", 0), Handler)
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(PORTFILE + ".tmp", PORTFILE)
srv.serve_forever()
