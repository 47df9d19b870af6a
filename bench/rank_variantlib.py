#!/usr/bin/env python3
"""The reference side of `bench/rank.sh`: orders a `*-variants.json` for a `vari-profile/1`
target with variantlib 0.2.2 and prints the labels, best first, as a JSON list.

This is `variantlib.api.get_variants_by_priority` with the plugin step replaced by the profile's
supported properties (the same input `vari rank --profile` gets), so both sides do the same work:
start, read and validate the metadata, filter, sort, print.

    python bench/rank_variantlib.py VARIANTS_JSON PROFILE_JSON
"""

import json
import sys

from variantlib.models.variant import VariantProperty
from variantlib.resolver.lib import sort_and_filter_supported_variants
from variantlib.utils import aggregate_feature_priorities, aggregate_namespace_priorities
from variantlib.variants_json import VariantsJson


def supported_properties(profile):
    """The profile's lists flattened in order: namespace, feature, value (most preferred first)."""
    return [
        VariantProperty(namespace=ns["namespace"], feature=f["name"], value=v)
        for ns in profile["namespaces"]
        for f in ns["features"]
        for v in f["values"]
    ]


def main():
    with open(sys.argv[1]) as f:
        variants_json = VariantsJson(json.load(f))
    with open(sys.argv[2]) as f:
        profile = json.load(f)
    ordered = sort_and_filter_supported_variants(
        list(variants_json.variants.values()),
        supported_properties(profile),
        namespace_priorities=aggregate_namespace_priorities(variants_json.namespace_priorities),
        feature_priorities=aggregate_feature_priorities(
            {ns: p.feature_order for ns, p in variants_json.providers.items()}
        ),
        filter_values=True,
    )
    json.dump([v.label for v in ordered], sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
