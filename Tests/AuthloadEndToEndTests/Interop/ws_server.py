"""A WebSocket server from the Python `websockets` package, for authload's interop tests.

Listens on 127.0.0.1 on a port the system picks and prints `port N`, then one line per event.
It stops by itself after LIFETIME seconds, so a test that dies cannot leave it running.

Paths: /echo echoes; /fragments sends a fragmented text and a fragmented binary message, then
echoes; /ping pings and reports the pong; /server-close closes with 4001 after the first message.
Every session prints `closed PATH CODE REASON` when it ends.
"""
import asyncio
import sys

import websockets

LIFETIME = 20


def say(*parts):
    # One write per line: a pipe delivers it whole, never split between reads.
    sys.stdout.write(" ".join(str(part) for part in parts) + "\n")
    sys.stdout.flush()


async def echo(ws):
    async for message in ws:
        await ws.send(message)


async def handler(ws, path=None):
    path = ws.path
    try:
        if path == "/fragments":
            await ws.send(["frag-1 ", "frag-2 ", "frag-3"])
            await ws.send([b"\x01\x02", b"\x03"])
            await echo(ws)
        elif path == "/ping":
            pong = await ws.ping(b"are you there")
            await asyncio.wait_for(pong, 5)
            say("pong received")
            await ws.send("pong received")
            await echo(ws)
        elif path == "/server-close":
            await ws.recv()
            await ws.close(code=4001, reason="server says bye")
        else:
            await echo(ws)
    except websockets.ConnectionClosed:
        pass
    finally:
        await ws.wait_closed()
        say("closed", path, ws.close_code, ws.close_reason)


async def main():
    async with websockets.serve(handler, "127.0.0.1", 0, subprotocols=["v12.stomp"]) as server:
        say("port", server.sockets[0].getsockname()[1])
        await asyncio.sleep(LIFETIME)


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
