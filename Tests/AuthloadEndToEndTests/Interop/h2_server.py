"""An HTTP/2 server on the `h2` package (python3-h2), written apart from authload, for the HTTP/2 client's interop tests.

h2c with prior knowledge on 127.0.0.1, a port the system picks, printed as `port N`. The `h2` package checks every
frame the client sends and raises on a protocol violation: the server then prints `protocol error: ...` and drops
the connection, which the test reads as a failure. It announces SETTINGS_INITIAL_WINDOW_SIZE 16384, so a client's
upload goes through a 16 KB window. What it does depends on the path:

- `/headers`: a response whose header block (a 40 KB field) is split over HEADERS and CONTINUATION frames.
- `/big`: a 1 MB body (bytes i % 251), sent as far as the client's windows allow, waiting for its WINDOW_UPDATEs.
- `/echo`: the request body back, with `x-length` saying how long it was.
- `/goaway`: answered; every GOAWAY_EVERY-th request on a connection is answered, then GOAWAY names it the last
  stream and the connection closes once the streams below it are answered; later streams are never processed.
- `/refuse`: the first request with a given `x-id` is refused with RST_STREAM REFUSED_STREAM, the next answered.
- `/reset`: RST_STREAM PROTOCOL_ERROR.
- `/calm`: GOAWAY ENHANCE_YOUR_CALM naming this stream, then the connection closes unanswered.

Every request processed prints `request PATH`, every stream refused `refused`, every GOAWAY `goaway`, every request
received above a GOAWAY's last stream `not processed`. Stops by
itself after LIFETIME seconds, so a test that dies cannot leave it running.
"""
import asyncio
import sys

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import h2.settings

LIFETIME = 60
GOAWAY_EVERY = 10
BIG = bytes(i % 251 for i in range(1024 * 1024))
refused_ids = set()


def say(text):
    print(text, flush=True)


class Connection(asyncio.Protocol):
    def connection_made(self, transport):
        self.transport = transport
        self.h2 = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
        self.h2.initiate_connection()
        self.h2.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 16384})
        self.flush()
        self.bodies = {}
        self.paths = {}
        self.pending = {}  # stream -> remaining bytes of a response held back by the client's window
        self.processed = 0
        self.last_stream = None  # set once this side sent GOAWAY

    def flush(self):
        data = self.h2.data_to_send()
        if data:
            self.transport.write(data)

    def data_received(self, data):
        try:
            events = self.h2.receive_data(data)
        except h2.exceptions.ProtocolError as error:
            say(f"protocol error: {error!r}")
            self.flush()
            self.transport.close()
            return
        for event in events:
            if isinstance(event, h2.events.RequestReceived):
                headers = dict(event.headers)
                self.paths[event.stream_id] = headers
                self.bodies[event.stream_id] = b""
                if event.stream_ended:
                    self.request(event.stream_id)
            elif isinstance(event, h2.events.DataReceived):
                self.bodies[event.stream_id] = self.bodies.get(event.stream_id, b"") + event.data
                self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.StreamEnded):
                if event.stream_id in self.paths:
                    self.request(event.stream_id)
            elif isinstance(event, h2.events.WindowUpdated):
                self.send_pending()
            elif isinstance(event, h2.events.StreamReset):
                self.pending.pop(event.stream_id, None)
        self.flush()
        self.close_if_done()

    def request(self, stream):
        headers = self.paths.pop(stream)
        body = self.bodies.pop(stream, b"")
        path = headers[":path"]
        if self.last_stream is not None and stream > self.last_stream:
            say("not processed")  # after our GOAWAY
            return
        if path == "/refuse" and headers.get("x-id") not in refused_ids:
            refused_ids.add(headers.get("x-id"))
            say("refused")
            self.h2.reset_stream(stream, error_code=h2.errors.ErrorCodes.REFUSED_STREAM)
            return
        say(f"request {path}")
        self.processed += 1
        if path == "/reset":
            self.h2.reset_stream(stream, error_code=h2.errors.ErrorCodes.PROTOCOL_ERROR)
        elif path == "/calm":
            say("goaway")
            self.h2.close_connection(error_code=h2.errors.ErrorCodes.ENHANCE_YOUR_CALM, last_stream_id=stream)
            self.flush()
            self.transport.close()
        elif path == "/headers":
            self.h2.send_headers(stream, [(":status", "200"), ("x-large", "v" * 40_000)], end_stream=True)
        elif path == "/big":
            self.h2.send_headers(stream, [(":status", "200"), ("content-length", str(len(BIG)))])
            self.pending[stream] = BIG
            self.send_pending()
        elif path == "/echo":
            self.h2.send_headers(stream, [(":status", "200"), ("x-length", str(len(body)))])
            self.pending[stream] = body
            self.send_pending()
        else:
            self.h2.send_headers(stream, [(":status", "200")])
            self.h2.send_data(stream, b"ok", end_stream=True)
            if path == "/goaway" and self.processed % GOAWAY_EVERY == 0 and self.last_stream is None:
                self.last_stream = stream
                say("goaway")
                self.h2.close_connection(last_stream_id=stream)

    def send_pending(self):
        for stream in list(self.pending):
            rest = self.pending[stream]
            while rest:
                window = min(self.h2.local_flow_control_window(stream), self.h2.max_outbound_frame_size)
                if window <= 0:
                    break
                self.h2.send_data(stream, rest[:window])
                rest = rest[window:]
            if rest:
                self.pending[stream] = rest
            else:
                self.h2.end_stream(stream)
                del self.pending[stream]

    def close_if_done(self):
        if self.last_stream is not None and not self.pending and not any(s <= self.last_stream for s in self.paths):
            self.transport.close()


async def main():
    loop = asyncio.get_running_loop()
    server = await loop.create_server(Connection, "127.0.0.1", 0)
    say(f"port {server.sockets[0].getsockname()[1]}")
    await asyncio.sleep(LIFETIME)


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
