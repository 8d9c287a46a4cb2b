# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The admin library behind the ``mqctl`` commands: async, typed, and free of terminal concerns.

* :mod:`.client` — :class:`~mqctl.api.client.AdminClient`, one asyncio remoting client with a
  connection per address, name-server failover and a per-request timeout;
* :mod:`.cluster`, :mod:`.topic`, :mod:`.broker`, :mod:`.consumer`, :mod:`.message`,
  :mod:`.namesrv`, :mod:`.ha` — one module per noun; each operation is an
  ``async def op(client, ...)`` returning a frozen dataclass (or a tuple of them) that the
  table, JSON and YAML renderers share;
* :mod:`.store` — offline reading of a broker's store directory;
* :mod:`.local` — starting and stopping a local reference cluster as background processes.

Every module is imported on demand by the command that needs it, so that ``mqctl --help`` and
the commands that do not talk to a server never pay for the protocol modules.
"""

from __future__ import annotations
