#!/usr/bin/python3
"""Sign every captured S3 request again with botocore, a SigV4 signer that shares no code with
libcurl's (tests/s3_server.sh, tests/cli_s3.sh).

    s3_resign.py SECRET LOGFILE...

Each LOGFILE line is one request as tests/s3_sign_proxy.py or tests/s3_fault_server.py
(capture) wrote it: method, path with its query, headers.  Each is signed again over the headers
its Authorization names, with its own access key, date and scope and the given secret; the
signature must be the one it carries.  The tests' own curl requests (User-Agent curl/...) are
left out: llmio's are checked.  Prints "N signatures match; kinds: ..." and exits 0, or names the
first mismatch with botocore's canonical request and exits 1.
"""
import json
import sys
from urllib.parse import parse_qs, urlsplit

from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials


def kind(method, path, headers):
    q = parse_qs(urlsplit(path).query, keep_blank_values=True)
    if method == "PUT":
        return "upload part" if "partNumber" in q else "PUT"
    if method == "POST":
        return "initiate" if "uploads" in q else "complete"
    if method == "DELETE":
        return "abort" if "uploadId" in q else "delete"
    if method == "GET":
        return "list" if "list-type" in q else "ranged GET" if "range" in headers else "GET"
    return method


secret, n, kinds = sys.argv[1], 0, set()
for log in sys.argv[2:]:
    for line in open(log):
        r = json.loads(line)
        h = {k.lower(): v for k, v in r["headers"].items()}
        got = h.get("authorization", "")
        if h.get("user-agent", "").startswith("curl/"):
            continue  # the tests' own curl (s3_curl, s3_start's probe): not llmio's to check
        if not got.startswith("AWS4-HMAC-SHA256 "):
            print("UNSIGNED", r["method"], r["path"])
            sys.exit(1)
        scope = got.split("Credential=")[1].split(",")[0].split("/")
        signed = got.split("SignedHeaders=")[1].split(",")[0].split(";")
        keep = {k: v for k, v in h.items() if k in signed}
        auth = S3SigV4Auth(Credentials(scope[0], secret), scope[3], scope[2])
        req = AWSRequest(method=r["method"], url="http://" + h["host"] + r["path"], headers=keep)
        req.context["timestamp"] = h["x-amz-date"]
        cr = auth.canonical_request(req)
        sig = auth.signature(auth.string_to_sign(req, cr), req)
        if "Signature=" + sig not in got:
            print("MISMATCH", r["method"], r["path"], got, sig, repr(cr))
            sys.exit(1)
        n += 1
        kinds.add(kind(r["method"], r["path"], h))
print(n, "signatures match; kinds:", ", ".join(sorted(kinds)))
