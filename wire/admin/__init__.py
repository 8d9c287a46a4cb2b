# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The admin client library: requests to name servers and brokers over :mod:`wire.aio`, typed
answers, and no terminal concerns. The ``mqctl`` commands are one user; the conformance suite and
scripts are others, which is why it lives below the CLI (it imports :mod:`wire` only: no typer,
no rich, no reference servers).

* :mod:`.client` — :class:`~wire.admin.client.AdminClient`, one asyncio remoting client with a
  connection per address, name-server failover and a per-request timeout; requests take a typed
  header of :mod:`wire.headers` (sent with ``to_ext()``);
* :mod:`.cluster`, :mod:`.topic`, :mod:`.broker`, :mod:`.consumer`, :mod:`.message`,
  :mod:`.namesrv`, :mod:`.ha` — one module per noun; each operation is an
  ``async def op(client, ...)`` returning a frozen dataclass (or a tuple of them) that the
  table, JSON and YAML renderers share;
* :mod:`.store` — offline reading of a broker's store directory;
* :mod:`.errors` — what the library raises besides :class:`wire.WireError`.

Nothing here is imported by ``import wire``; each module is imported on demand, and the header
classes only by the operations that send them, so that a short-lived command pays only for the
protocol modules it uses.

Example::

    import asyncio
    from wire.admin.client import AdminClient
    from wire.admin.cluster import cluster_list

    async def main() -> None:
        async with AdminClient(["127.0.0.1:9876"], timeout=3.0) as client:
            for row in (await cluster_list(client)).brokers:
                print(row.broker_name, row.addr, row.version)

    asyncio.run(main())
"""

from __future__ import annotations
