# Licensed under the Apache License, Version 2.0. See LICENSE.
"""conformance: check any RocketMQ name server or broker, given its address."""
