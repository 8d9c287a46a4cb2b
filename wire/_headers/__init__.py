# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The header classes of :mod:`wire.headers`, one module per area, each imported on first use."""
