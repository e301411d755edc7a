"""The servers' listening socket (``autofeedback.serve._listen.listen``)."""

from __future__ import annotations

import asyncio
import socket

from autofeedback.serve._listen import listen


def test_connections_accepted_by_asyncio_have_nagle_off() -> None:
    """uvicorn serves the proxy and the MCP proxy on the socket ``listen`` binds. asyncio
    sets ``TCP_NODELAY`` only on a connection whose protocol number says TCP; a socket
    made with protocol 0 left Nagle's algorithm on, and every answer on a kept-alive
    connection (headers, then body: two writes) waited for the client's delayed ACK,
    about 40 ms (benchmarks/proxy.py: +50 ms added per call)."""
    sock = listen("127.0.0.1", 0)
    port = sock.getsockname()[1]
    seen: list[int] = []

    async def main() -> None:
        def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            raw = writer.get_extra_info("socket")
            seen.append(raw.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(accepted, sock=sock)
        async with server:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            for _ in range(100):
                if seen:
                    break
                await asyncio.sleep(0.01)
            writer.close()

    asyncio.run(main())
    assert seen and seen[0] != 0
