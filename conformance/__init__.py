# Licensed under the Apache License, Version 2.0. See LICENSE.
"""conformance: grade any RocketMQ name server, broker or controller, given its address, and
replay captured traffic against it.

A library first:

* :mod:`.model` — levels (MUST, SHOULD, INFO), outcomes (Autobahn's pass, non-strict,
  informational, unimplemented, fail; plus deviation and not-run), :class:`~.model.Case`;
* :mod:`.registry` — the catalogue of cases by stable ID (``catalogue()``, ``select()``, ``get()``);
  the cases themselves live in :mod:`.cases`, one module per family; :mod:`.catalogue` writes
  the catalogue into ``docs/conformance.md``;
* :mod:`.target` — the addresses graded, and what the suite learns about them first;
* :mod:`.runner` — :func:`~.runner.run_suite` runs and grades (failing closed);
* :mod:`.deviations` — known-deviation YAML files;
* :mod:`.report` — JSON, JUnit XML and the side-by-side HTML report of several targets;
* :mod:`.refcluster` — our reference cluster in a temporary directory, the default target;
* :mod:`.replay` — re-sends captured requests to a target and compares the answers;
* :mod:`.pytest_plugin` — ``pytest --pyargs conformance --rmq-namesrv ADDR``.

``docs/conformance.md`` says how to run it against a server of one's own and how to read a report.

``mqctl conformance run|list|explain|report|replay`` is the command line over it. Example::

    from conformance.registry import select
    from conformance.runner import run_suite_sync
    from conformance.target import Target

    report = run_suite_sync(Target(namesrv="127.0.0.1:9876"), select(only=["NS-*"]))
    print(report.passed, report.counts())
"""

from __future__ import annotations

from wire import __version__

__all__ = ["__version__"]
