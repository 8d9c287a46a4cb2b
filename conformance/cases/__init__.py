# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The cases, one module per family (the ID prefix): framing (FRM), namesrv (NS), broker (BR),
admin (ADM), ha5 (HA5), controller (CTL), robustness (ROB). Each case is an ``async def`` registered with
:func:`conformance.registry.case`; :mod:`._kit` holds the requests they share."""
