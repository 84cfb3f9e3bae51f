#!/usr/bin/env python3
# slowlink.py - slow network links for the PCP tests (tests/scripts/pcp_slow.sh):
# a TCP relay that holds every chunk DELAY_MS before passing it on, in both
# directions and in order, as a long link would (a round trip through it
# takes twice DELAY_MS more).  One process relays several links:
#
#   slowlink.py DELAY_MS LISTEN_PORT:TARGET_PORT [...]
#
# on 127.0.0.1.  It prints "ready" once every port listens, and runs until
# it is killed.
import asyncio
import sys


async def pipe(reader, writer, delay):
    q = asyncio.Queue()

    async def later():
        while True:
            due, data = await q.get()
            wait = due - asyncio.get_running_loop().time()
            if wait > 0:
                await asyncio.sleep(wait)
            if data is None:
                break
            writer.write(data)
            await writer.drain()
        writer.close()

    sender = asyncio.create_task(later())
    try:
        while True:
            data = await reader.read(65536)
            await q.put((asyncio.get_running_loop().time() + delay, data or None))
            if not data:
                break
    except (ConnectionError, OSError):
        await q.put((0, None))
    await sender


async def main():
    delay = float(sys.argv[1]) / 1000
    servers = []
    for link in sys.argv[2:]:
        listen, target = (int(x) for x in link.split(":"))

        async def relay(reader, writer, target=target):
            try:
                tr, tw = await asyncio.open_connection("127.0.0.1", target)
            except OSError:
                writer.close()
                return
            await asyncio.gather(pipe(reader, tw, delay), pipe(tr, writer, delay), return_exceptions=True)

        servers.append(await asyncio.start_server(relay, "127.0.0.1", listen))
    print("ready", flush=True)
    await asyncio.gather(*(s.serve_forever() for s in servers))


asyncio.run(main())
