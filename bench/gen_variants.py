#!/usr/bin/env python3
"""Writes a synthetic release for the ranking benchmark: a `*-variants.json` (schema 0.2.0, read
by both vari and variantlib 0.2.2) with N variants of K properties each, and a `vari-profile/1`
target that supports about a quarter of them.

Deterministic (fixed seed), standard library only.

    python3 bench/gen_variants.py OUT_DIR [--variants 1000] [--properties 20]
"""

import argparse
import hashlib
import json
import random
from pathlib import Path

NAMESPACES = 5
FEATURES_PER_NAMESPACE = 10
VALUES_PER_FEATURE = 15


def default_label(properties):
    """The default label (format.md §1): SHA-256 over sorted `ns :: f :: v\\n` lines."""
    lines = "".join(f"{ns} :: {f} :: {v}\n" for ns, f, v in sorted(properties))
    return hashlib.sha256(lines.encode()).hexdigest()[:8]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--variants", type=int, default=1000)
    parser.add_argument("--properties", type=int, default=20)
    args = parser.parse_args()
    rng = random.Random(817)

    namespaces = [f"ns{i}" for i in range(NAMESPACES)]
    features = [(ns, f"feat{j}") for ns in namespaces for j in range(FEATURES_PER_NAMESPACE)]
    values = [f"v{k}" for k in range(VALUES_PER_FEATURE)]

    variants = {}
    while len(variants) < args.variants:
        chosen = rng.sample(features, args.properties)
        props = [(ns, f, rng.choice(values)) for ns, f in chosen]
        tree = {}
        for ns, f, v in props:
            tree.setdefault(ns, {})[f] = [v]
        variants[default_label(props)] = tree
    variants["null"] = {}

    metadata = {
        "$schema": "https://variants-schema.wheelnext.dev/v0.2.0.json",
        "default-priorities": {"namespace": namespaces},
        "providers": {ns: {"requires": [f"{ns}-provider"]} for ns in namespaces},
        "variants": variants,
    }

    # The target: every namespace, features in a shuffled order, each feature supporting all but
    # one value in a shuffled order, so (14/15)^20 ≈ 25 % of the variants are compatible.
    profile_namespaces = []
    for ns in namespaces:
        feats = [f for n, f in features if n == ns]
        rng.shuffle(feats)
        entries = []
        for f in feats:
            vals = values.copy()
            rng.shuffle(vals)
            entries.append({"name": f, "values": vals[:-1], "multi_value": False})
        profile_namespaces.append({"namespace": ns, "features": entries})
    profile = {"schema": "vari-profile/1", "namespaces": profile_namespaces}

    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "synthetic-1.0-variants.json").write_text(json.dumps(metadata, indent=4) + "\n")
    (args.out / "profile.json").write_text(json.dumps(profile, indent=2) + "\n")


if __name__ == "__main__":
    main()
