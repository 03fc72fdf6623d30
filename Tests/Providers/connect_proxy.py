"""A company's HTTP proxy, as small as it can be: `CONNECT host:port` tunnels to 127.0.0.1:port whatever the host
(the company's names resolve only on its side, as `mcp.test` does here), and counts the tunnels per host.
`GET /_stats` (asked of the proxy itself) answers {"tunnels": {"host:port": n}}. Prints `READY <port>` and runs until
standard input closes."""
import asyncio
import json
import sys

TUNNELS = {}


async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def handle(reader, writer):
    head = await reader.readuntil(b"\r\n\r\n")
    method, target = head.split(b"\r\n")[0].decode("latin-1").split(" ")[:2]
    if method != "CONNECT":
        body = json.dumps({"tunnels": TUNNELS}).encode()
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
        await writer.drain()
        writer.close()
        return
    host, port = target.rsplit(":", 1)
    TUNNELS[target] = TUNNELS.get(target, 0) + 1
    try:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", int(port))
    except OSError:
        writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
        writer.close()
        return
    writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
    await writer.drain()
    await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))


async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print("READY", server.sockets[0].getsockname()[1], flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    server.close()


if __name__ == "__main__":
    asyncio.run(main())
