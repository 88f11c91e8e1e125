"""An HTTPS client of `capslint admission` for the integration tests, on Python's own `ssl` and
`http.client` (a second TLS and HTTP implementation besides curl), and the independent RFC 6902
implementation the webhook's patches are applied with (the `jsonpatch` package).

Usage:
  admission_client.py request CA HOST PORT METHOD PATH [BODY_FILE]...
      one keep-alive connection, one request per BODY_FILE (or one without a body); prints a JSON list
      of {"status", "body"} (the body parsed as JSON when it is JSON, else text)
  admission_client.py patch OBJECT_FILE PATCH_BASE64
      prints the object with the patch applied
  admission_client.py slowloris CA HOST PORT
      sends a request's headers one byte a second; prints {"sent", "total", "closed"} when the server
      drops the connection (or the headers are all sent)
  admission_client.py inflight CA HOST PORT BODY_FILE READY_FILE GO_FILE
      sends the headers (expecting 100 Continue) and half the body, creates READY_FILE, waits for GO_FILE
      to exist, sends the rest; prints {"status", "body"}
  admission_client.py peer-cert CA HOST PORT
      prints the SHA-256 of the certificate the server presents (verified against CA)
"""

import base64
import hashlib
import http.client
import json
import os
import socket
import ssl
import sys
import time


def context(ca):
    ctx = ssl.create_default_context(cafile=ca)
    return ctx


def decoded(data):
    text = data.decode("utf-8", "replace")
    try:
        return json.loads(text)
    except ValueError:
        return text


def request(ca, host, port, method, path, bodies):
    connection = http.client.HTTPSConnection(host, int(port), context=context(ca), timeout=60)
    answers = []
    for body in bodies or [None]:
        data = None
        headers = {}
        if body is not None:
            with open(body, "rb") as handle:
                data = handle.read()
            headers["Content-Type"] = "application/json"
        connection.request(method, path, body=data, headers=headers)
        response = connection.getresponse()
        answers.append({"status": response.status, "body": decoded(response.read())})
    connection.close()
    print(json.dumps(answers))


def patch(object_file, patch_base64):
    import jsonpatch

    with open(object_file, encoding="utf-8") as handle:
        document = json.load(handle)
    operations = json.loads(base64.b64decode(patch_base64))
    print(json.dumps(jsonpatch.apply_patch(document, operations)))


def connect(ca, host, port):
    raw = socket.create_connection((host, int(port)), timeout=60)
    return context(ca).wrap_socket(raw, server_hostname=host)


def slowloris(ca, host, port):
    tls = connect(ca, host, port)
    headers = ("POST /validate HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
               "X-Padding: slowly-slowly-slowly-slowly\r\n\r\n" % host).encode()
    tls.settimeout(1.0)
    sent = 0
    closed = False
    for byte in headers:
        try:
            tls.sendall(bytes([byte]))
            sent += 1
            if tls.recv(1024) == b"":
                closed = True
                break
        except socket.timeout:
            continue
        except (OSError, ssl.SSLError):
            closed = True
            break
    print(json.dumps({"sent": sent, "total": len(headers), "closed": closed}))


def inflight(ca, host, port, body_file, ready_file, go_file):
    with open(body_file, "rb") as handle:
        body = handle.read()
    tls = connect(ca, host, port)
    head = ("POST /validate HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
            "Expect: 100-continue\r\nContent-Length: %d\r\n\r\n" % (host, len(body))).encode()
    half = len(body) // 2
    tls.sendall(head)
    # The server asks for the body once the request is being handled: from then on it is in flight.
    interim = b""
    while not interim.endswith(b"\r\n\r\n"):
        chunk = tls.recv(1)
        if not chunk:
            raise SystemExit("the connection closed before 100 Continue")
        interim += chunk
    if not interim.startswith(b"HTTP/1.1 100"):
        raise SystemExit("expected 100 Continue, got %r" % interim)
    tls.sendall(body[:half])
    open(ready_file, "w").close()
    deadline = time.time() + 60
    while not os.path.exists(go_file) and time.time() < deadline:
        time.sleep(0.05)
    tls.sendall(body[half:])
    response = http.client.HTTPResponse(tls)
    response.begin()
    print(json.dumps({"status": response.status, "body": decoded(response.read())}))


def peer_cert(ca, host, port):
    tls = connect(ca, host, port)
    print(hashlib.sha256(tls.getpeercert(binary_form=True)).hexdigest())
    tls.close()


def main():
    command, arguments = sys.argv[1], sys.argv[2:]
    if command == "request":
        request(*arguments[:5], arguments[5:])
    elif command == "patch":
        patch(*arguments)
    elif command == "slowloris":
        slowloris(*arguments)
    elif command == "inflight":
        inflight(*arguments)
    elif command == "peer-cert":
        peer_cert(*arguments)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
