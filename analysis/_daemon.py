# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The executors' Python daemon (``spark.python.daemon.module``): PySpark's own, started without
the zipped copy of pyspark when this interpreter has the very same pyspark installed.

Spark puts ``$SPARK_HOME/python/lib/pyspark.zip`` (3 MB) and the py4j zip first on the workers'
``PYTHONPATH``. Python imports from a zip without caching bytecode, so every worker compiles
pyspark again, and PySpark calls ``importlib.invalidate_caches()`` before every task, which makes
each zip importer read its archive's whole directory again; Spark also puts its spark-core jar
(5,000 entries, no Python) on the path, which costs the same. Measured on ``mqctl analyze``, about
a third of the workers' time went there. So a jar that holds no Python module is left off the
path, and, when pyspark is pip-installed, so are the zips: they sit inside the installed package
(``<site-packages>/pyspark/python/lib``) and hold the same code. With any other Spark
installation the zips stay.

The daemon also imports, once, what every task of the job runs (pyspark's worker, the decoder,
pyarrow), so the workers it forks start with them, and freezes those objects out of the garbage
collector: PySpark collects after every task, which otherwise walks every module object of the
worker each time.
"""

from __future__ import annotations

import os
import sys
from importlib.machinery import PathFinder


def _drop_jars() -> None:
    import zipfile

    for p in [p for p in sys.path if p.endswith(".jar")]:
        try:
            with zipfile.ZipFile(p) as jar:
                python = any(n.endswith((".py", ".pyc")) for n in jar.namelist())
        except (OSError, zipfile.BadZipFile):
            continue
        if not python:
            sys.path.remove(p)
            sys.path_importer_cache.pop(p, None)


def _drop_installed_zips() -> None:
    zips = [p for p in sys.path if p.endswith(".zip") and os.path.basename(p).startswith(("pyspark", "py4j"))]
    if not zips:
        return
    rest = [p for p in sys.path if p not in zips]
    spec = PathFinder.find_spec("pyspark", rest)
    if spec is None or spec.origin is None or PathFinder.find_spec("py4j", rest) is None:
        return
    lib = os.path.join(os.path.dirname(spec.origin), "python", "lib")
    if any(os.path.dirname(z) != lib for z in zips):
        return
    sys.path[:] = rest
    for z in zips:
        sys.path_importer_cache.pop(z, None)


if __name__ == "__main__":
    _drop_jars()
    _drop_installed_zips()
    import gc

    from pyspark import daemon, worker  # noqa: F401

    try:
        import analysis.tasks  # noqa: F401
    except ImportError:  # pragma: no cover - a worker of another job
        pass
    gc.collect()
    gc.freeze()
    daemon.manager()  # type: ignore[no-untyped-call]  # untyped in pyspark
