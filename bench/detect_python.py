#!/usr/bin/env python3
"""The Python side of `bench/detect.sh`: the reference way of learning what this CPU supports.

    python bench/detect_python.py archspec    # archspec (PyPI) classifies the CPU
    python bench/detect_python.py variantlib  # variantlib 0.2.2 queries the x86_64 provider
                                              # plugin (provider-variant-x86-64 from PyPI,
                                              # through bench/x86_64_adapter.py; PYTHONPATH=bench)

Each prints the supported x86_64 features as JSON, so `detect.sh` can check that they agree with
`vari detect`.
"""

import json
import sys


def with_archspec():
    import archspec.cpu

    host = archspec.cpu.host()
    print(json.dumps({"host": host.name, "generic": host.generic.name,
                      "features": sorted(host.features)}))


def with_variantlib():
    from variantlib.plugins.loader import DictPluginLoader

    # The reference plugin does not follow variantlib 0.2.2's plugin protocol;
    # `x86_64_adapter` bridges only the differences (see its docstring).
    plugin = "x86_64_adapter:plugin"
    with DictPluginLoader({"x86_64": plugin}) as loader:
        configs = loader.get_supported_configs()
    features = [
        {"name": c.name, "values": list(c.values)}
        for provider in configs.values()
        for c in provider.configs
    ]
    print(json.dumps(features))


if __name__ == "__main__":
    {"archspec": with_archspec, "variantlib": with_variantlib}[sys.argv[1]]()
