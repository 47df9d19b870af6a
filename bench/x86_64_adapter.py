"""provider-variant-x86-64 0.0.1.post2 (the reference x86_64 plugin on PyPI) made loadable by
variantlib 0.2.2, whose plugin protocol differs from the one the plugin was written for: it
requires `get_all_configs`, a `multi_value` flag on each config, `get_supported_configs()` without
arguments, and calls the methods on the object named by `plugin-api` (an instance, not a class).

Only those differences are bridged; classification (archspec) and the supported list are
the reference plugin's own code. Used by `bench/detect_python.py variantlib`.
"""

from dataclasses import dataclass

from provider_variant_x86_64.plugin import X8664Plugin


@dataclass(frozen=True)
class VariantFeatureConfig:
    name: str
    values: list
    multi_value: bool = False


class Plugin(X8664Plugin):
    def get_all_configs(self):
        return [VariantFeatureConfig("level", list(self._level_range(self.max_known_level)))] + [
            VariantFeatureConfig(feature, ["on"]) for feature in self.all_features
        ]

    def get_supported_configs(self):
        return [
            VariantFeatureConfig(c.name, c.values)
            for c in super().get_supported_configs(None)
        ]


#: The object variantlib 0.2.2 loads (`plugin-api = "x86_64_adapter:plugin"`).
plugin = Plugin()
