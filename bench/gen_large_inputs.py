#!/usr/bin/env python3
"""Writes the inputs of the peak-memory benchmark: large data files that are neither manifests nor model
configurations (YAML, JSON and TOML, each with the words that make capslint look closer: `kind`,
`thread`, `n_jobs`), a kustomize tree whose overlays share bases (many overlays over two sibling bases
that include the same shared bases, bases over bases), and a diamond of bases over bases whose top reaches
its bottom along 2^20 paths. Deterministic.

Usage: gen_large_inputs.py OUT_DIR [MEGABYTES] [OVERLAYS]
  OUT_DIR/data/records.yaml, records.json, records.toml   records, about MEGABYTES each (default 48)
  OUT_DIR/data/values.toml, keys.json                      small values / `n_jobs: -1` keys, MEGABYTES * 1.25
  OUT_DIR/kustomize/                                        OVERLAYS overlays over shared bases (default 50)
  OUT_DIR/diamond/                                          20 levels of two bases, each over both below
"""
import json
import os
import sys


def record(index):
    return {
        "id": index,
        "kind": "sample" if index % 3 else "holdout",
        "thread": f"t-{index % 977}",
        "label": index % 7,
        "text": f"record {index} of the corpus, with some words to make it look like data",
        "features": [round((index * 7919 + step * 104729) % 1000 / 10.0, 1) for step in range(8)],
    }


def write_until(path, size, header, render, footer=""):
    with open(path, "w") as out:
        out.write(header)
        written = len(header)
        index = 0
        batch = 1000
        while written < size:
            chunk = "".join(render(item) for item in records_range(index, batch))
            out.write(chunk)
            written += len(chunk)
            index += batch
        out.write(footer)


def records_range(start, count):
    return (record(index) for index in range(start, start + count))


def yaml_record(item):
    features = ", ".join(str(value) for value in item["features"])
    return (
        f"- id: {item['id']}\n  kind: {item['kind']}\n  thread: {item['thread']}\n  label: {item['label']}\n"
        f"  text: \"{item['text']}\"\n  features: [{features}]\n"
    )


def toml_record(item):
    features = ", ".join(str(value) for value in item["features"])
    return (
        f"[[records]]\nid = {item['id']}\nkind = \"{item['kind']}\"\nthread = \"{item['thread']}\"\n"
        f"label = {item['label']}\ntext = \"{item['text']}\"\nfeatures = [{features}]\n\n"
    )


def write_json(path, size):
    # One document: a list of records, written in chunks and joined by commas.
    with open(path, "w") as out:
        out.write('{"name": "corpus", "records": [\n')
        written, index, first = 0, 0, True
        while written < size:
            for item in records_range(index, 1000):
                line = ("" if first else ",\n") + json.dumps(item)
                first = False
                out.write(line)
                written += len(line)
            index += 1000
        out.write("\n]}\n")


DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  replicas: 2
  template:
    spec:
      containers:
{containers}"""

CONTAINER = """      - name: {name}
        image: registry.example.com/ml/{name}:1
        env:
{env}        resources:
          requests: {{cpu: "2", memory: 4Gi}}
          limits: {{cpu: "2", memory: 4Gi}}
"""


def deployment(name, containers=3, variables=12):
    rendered = []
    for index in range(containers):
        env = "".join(f"        - {{name: VAR_{step}, value: \"{name}-{index}-{step}\"}}\n" for step in range(variables))
        rendered.append(CONTAINER.format(name=f"{name}-c{index}", env=env))
    return DEPLOYMENT.format(name=name, containers="".join(rendered))


def write(root, path, text):
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as out:
        out.write(text)


def kustomize_tree(root, overlays):
    """core (4 files of 10 workloads) <- platform <- {team-a, team-b} (prefixes) <- shared <- overlays: every
    overlay reaches core along two paths, and all of them share one render of each base."""
    core = []
    for part in range(4):
        name = f"workloads-{part}.yaml"
        core.append(name)
        write(root, f"core/{name}", "---\n".join(deployment(f"w{part}-{index}") for index in range(10)))
    write(root, "core/kustomization.yaml", "resources:\n" + "".join(f"- {name}\n" for name in core))
    write(
        root,
        "platform/kustomization.yaml",
        "resources:\n- ../core\ncommonLabels:\n  platform: ml\npatches:\n- path: threads.yaml\n  target: {kind: Deployment}\n",
    )
    write(
        root,
        "platform/threads.yaml",
        "- op: add\n  path: /spec/template/spec/containers/0/env/-\n  value: {name: OMP_NUM_THREADS, value: \"2\"}\n",
    )
    for team in ("team-a", "team-b"):
        write(root, f"{team}/kustomization.yaml", f"resources:\n- ../platform\nnamePrefix: {team}-\n")
    write(root, "shared/kustomization.yaml", "resources:\n- ../team-a\n- ../team-b\n")
    for index in range(overlays):
        write(
            root,
            f"overlays/env-{index}/kustomization.yaml",
            f"resources:\n- ../../shared\nnamespace: env-{index}\nimages:\n- name: registry.example.com/ml/w0-0-c0\n"
            f"  newTag: \"{index}\"\n",
        )


def write_values_toml(path, size):
    with open(path, "w") as out:
        out.write("thread = [")
        chunk = "0,1,2,3,4,5,6,7,8,9," * 1000
        for _ in range(size // len(chunk) + 1):
            out.write(chunk)
        out.write("0]\n")


def write_keys_json(path, size):
    with open(path, "w") as out:
        out.write("[")
        chunk = '{"n_jobs": -1},' * 1000
        for _ in range(size // len(chunk) + 1):
            out.write(chunk)
        out.write("{}]\n")


def diamond(root, levels=20):
    for name in ("a", "b"):
        write(root, f"l0/{name}/kustomization.yaml", "resources: []\n")
    for level in range(1, levels + 1):
        for name in ("a", "b"):
            write(root, f"l{level}/{name}/kustomization.yaml", f"resources:\n- ../../l{level - 1}/a\n- ../../l{level - 1}/b\n")
    write(root, "app/kustomization.yaml", f"resources:\n- ../l{levels}/a\n- deployment.yaml\n")
    write(root, "app/deployment.yaml", deployment("app"))


def main():
    out = sys.argv[1]
    megabytes = int(sys.argv[2]) if len(sys.argv) > 2 else 48
    overlays = int(sys.argv[3]) if len(sys.argv) > 3 else 50
    size = megabytes * 1_000_000
    data = os.path.join(out, "data")
    os.makedirs(data, exist_ok=True)
    write_until(os.path.join(data, "records.yaml"), size, "# a data set, not a manifest\n", yaml_record)
    write_until(os.path.join(data, "records.toml"), size, "name = \"corpus\"\n\n", toml_record)
    write_json(os.path.join(data, "records.json"), size)
    write_values_toml(os.path.join(data, "values.toml"), size * 5 // 4)
    write_keys_json(os.path.join(data, "keys.json"), size * 5 // 4)
    kustomize_tree(os.path.join(out, "kustomize"), overlays)
    diamond(os.path.join(out, "diamond"))


if __name__ == "__main__":
    main()
