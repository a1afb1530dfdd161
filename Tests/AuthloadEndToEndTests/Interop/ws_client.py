"""A WebSocket client from the Python `websockets` package, run against authload's HTTPServer.

Usage: ws_client.py ws://127.0.0.1:PORT
Prints one `key value` line per check and exits 0; any step that fails or takes over 5 seconds
prints `error ...` and exits 1. The whole run is bounded to 30 seconds.
"""
import asyncio
import sys

import websockets


def say(*parts):
    # One write per line: a pipe delivers it whole, never split between reads.
    sys.stdout.write(" ".join(str(part) for part in parts) + "\n")
    sys.stdout.flush()


async def step(awaitable):
    return await asyncio.wait_for(awaitable, 5)


async def scenarios(base):
    async with websockets.connect(base + "/echo", subprotocols=["v11.stomp", "v12.stomp"], open_timeout=5) as ws:
        say("subprotocol", ws.subprotocol)
        await ws.send("hello")
        say("echo", await step(ws.recv()))
        await ws.send(b"\x00\x01\xff")
        say("binary", (await step(ws.recv())).hex())
        await ws.send(["fragments?", "-a", "-b"])
        say("fragments", await step(ws.recv()))
        pong = await ws.ping(b"p1")
        await step(pong)
        say("pong", "ok")
        await step(ws.close(code=4004, reason="python bye"))
        say("close_code", ws.close_code)

    async with websockets.connect(base + "/echo", open_timeout=5) as ws:
        await ws.send("close 1011")
        say("before_close", await step(ws.recv()))
        try:
            await step(ws.recv())
            say("error", "the server did not close")
        except websockets.ConnectionClosed as closed:
            say("server_close", closed.rcvd.code, closed.rcvd.reason)

    try:
        async with websockets.connect(base + "/forbidden", open_timeout=5):
            say("error", "the upgrade to /forbidden was accepted")
    except websockets.InvalidStatusCode as rejected:
        say("rejected", rejected.status_code)


def main():
    try:
        asyncio.run(asyncio.wait_for(scenarios(sys.argv[1]), 30))
    except Exception as error:  # report anything, so the Swift test shows it
        say("error", type(error).__name__, error)
        sys.exit(1)


if __name__ == "__main__":
    main()
