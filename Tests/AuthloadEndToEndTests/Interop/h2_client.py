"""An HTTP/2 client on the `h2` package, against authload's embedded server: h2 raises on any protocol error.

Usage: h2_client.py HOST PORT tls|plain|tls-http1

`tls-http1` offers only http/1.1 by ALPN instead, checks that the server chose it, and sends one HTTP/1.1 GET.

Sends, on one connection: a GET whose header block (a 40 KB header) h2 must split over HEADERS and CONTINUATION,
a POST of a 1 MB body sent only as far as the server's flow-control windows allow, and ten GETs at once. Prints
one JSON line: the statuses by request, the CONTINUATION frames written, the body bytes sent, the protocol ALPN
chose. Exits 1 on a reset stream or a connection the server ended early.
"""

import json
import socket
import ssl
import sys

import h2.config
import h2.connection
import h2.events
from hyperframe.frame import Frame

host, port, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
sock = socket.create_connection((host, port), timeout=10)
alpn = None
if mode == "tls":
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.set_alpn_protocols(["h2", "http/1.1"])
    sock = context.wrap_socket(sock, server_hostname="localhost")
    alpn = sock.selected_alpn_protocol()
    if alpn != "h2":
        print(json.dumps({"error": f"ALPN chose {alpn!r}, not h2"}))
        sys.exit(1)

if mode == "tls-http1":
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.set_alpn_protocols(["http/1.1"])
    sock = context.wrap_socket(sock, server_hostname="localhost")
    sock.sendall(f"GET /health HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode())
    answer = b""
    while chunk := sock.recv(65536):
        answer += chunk
    status = answer.split(b"\r\n", 1)[0].decode()
    print(json.dumps({"alpn": sock.selected_alpn_protocol(), "statusLine": status}))
    sys.exit(0)

conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
continuations = 0


def flush():
    """Writes what h2 queued, counting the CONTINUATION frames among it."""
    global continuations
    data = conn.data_to_send()
    view = memoryview(data)
    while len(view) >= 9:
        frame, length = Frame.parse_frame_header(view[:9])
        if frame.type == 0x9:
            continuations += 1
        view = view[9 + length:]
    sock.sendall(data)


statuses = {}
ended = set()


def pump():
    """Reads once and hands the bytes to h2; fails on a reset stream or the end of the connection."""
    data = sock.recv(65536)
    if not data:
        print(json.dumps({"error": "the server closed the connection", "statuses": statuses}))
        sys.exit(1)
    for event in conn.receive_data(data):
        if isinstance(event, h2.events.ResponseReceived):
            statuses[event.stream_id] = int(dict(event.headers)[":status"])
        elif isinstance(event, h2.events.DataReceived):
            conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, h2.events.StreamEnded):
            ended.add(event.stream_id)
        elif isinstance(event, (h2.events.StreamReset, h2.events.ConnectionTerminated)):
            print(json.dumps({"error": f"{type(event).__name__}: {event}"}))
            sys.exit(1)
    flush()


def head(method, path, extra=()):
    return [(":method", method), (":scheme", "https" if mode == "tls" else "http"),
            (":authority", f"{host}:{port}"), (":path", path)] + list(extra)


conn.initiate_connection()
flush()
requests = {}

big = conn.get_next_available_stream_id()
conn.send_headers(big, head("GET", "/health", [("x-padding", "p" * 40_000)]), end_stream=True)
requests[big] = "big-header"
flush()

body = bytes(range(256)) * 4096  # 1 MB
post = conn.get_next_available_stream_id()
conn.send_headers(post, head("POST", "/health", [("content-length", str(len(body))), ("content-type", "application/octet-stream")]))
requests[post] = "1MB-body"
flush()
sent = 0
while sent < len(body):
    window = min(conn.local_flow_control_window(post), conn.max_outbound_frame_size, len(body) - sent)
    if window <= 0:
        pump()
        continue
    conn.send_data(post, body[sent:sent + window], end_stream=sent + window == len(body))
    sent += window
    flush()

for n in range(10):
    stream = conn.get_next_available_stream_id()
    conn.send_headers(stream, head("GET", f"/health?n={n}"), end_stream=True)
    requests[stream] = f"get-{n}"
flush()

while not all(stream in ended for stream in requests):
    pump()
conn.close_connection()
flush()
sock.close()
print(json.dumps({
    "statuses": {requests[stream]: status for stream, status in statuses.items()},
    "continuations": continuations, "bodyBytes": sent, "alpn": alpn,
}))
