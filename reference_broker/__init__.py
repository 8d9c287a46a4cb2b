# Licensed under the Apache License, Version 2.0. See LICENSE.
"""reference_broker: an asyncio RocketMQ name server and broker that real clients use unchanged."""
