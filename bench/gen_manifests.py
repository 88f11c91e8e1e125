#!/usr/bin/env python3
"""Writes a synthetic manifest corpus: multi-document streams of Kubernetes workloads, some compliant with
ADR-0096 and some broken in the ways capslint's CAP2xx rules look for. Deterministic for a given seed.

Usage: gen_manifests.py OUT_DIR WORKLOADS [SEED]
"""
import os
import random
import sys

KINDS = ["Deployment", "StatefulSet", "Job", "CronJob", "DaemonSet", "Pod"]
CAPS = ["OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS", "LOKY_MAX_CPU_COUNT"]


def container(rng, index):
    cpu = rng.choice(["1", "2", "4", "1500m", "500m", None])
    lines = [f"    - name: worker-{index}", f"      image: registry.example.com/ml/trainer:{rng.randint(1, 40)}"]
    env = []
    if rng.random() < 0.7:
        env.append(("CPU_LIMIT", None))
    if rng.random() < 0.6:
        for cap in CAPS[: rng.randint(1, len(CAPS))]:
            env.append((cap, str(rng.choice([1, 2, 4, 8]))))
    if rng.random() < 0.5:
        env.append(("OMP_WAIT_POLICY", rng.choice(["passive", "PASSIVE", "active"])))
    if env:
        lines.append("      env:")
        for name, value in env:
            lines.append(f"        - name: {name}")
            if value is None:
                lines.append("          valueFrom:")
                lines.append("            resourceFieldRef:")
                lines.append("              resource: limits.cpu")
            else:
                lines.append(f'          value: "{value}"')
    if cpu is not None:
        lines.append("      resources:")
        lines.append("        requests:")
        lines.append(f'          cpu: "{cpu}"')
        lines.append("          memory: 2Gi")
        lines.append("        limits:")
        lines.append(f'          cpu: "{cpu}"')
        lines.append("          memory: 2Gi")
    return lines


def pod_spec(rng, indent):
    pad = " " * indent
    lines = ["spec:", "  containers:"]
    for index in range(rng.randint(1, 3)):
        lines.extend(container(rng, index))
    return [pad + line for line in lines]


def workload(rng, number):
    kind = rng.choice(KINDS)
    name = f"{kind.lower()}-{number}"
    api = {"Deployment": "apps/v1", "StatefulSet": "apps/v1", "DaemonSet": "apps/v1", "Job": "batch/v1",
           "CronJob": "batch/v1", "Pod": "v1"}[kind]
    head = [f"apiVersion: {api}", f"kind: {kind}", "metadata:", f"  name: {name}", "  namespace: training"]
    if kind == "Pod":
        return head + pod_spec(rng, 0)
    if kind == "CronJob":
        return head + ["spec:", '  schedule: "0 * * * *"', "  jobTemplate:", "    spec:", "      template:"] + pod_spec(rng, 8)
    replicas = [f"  replicas: {rng.randint(1, 6)}"] if kind in ("Deployment", "StatefulSet") else []
    return head + ["spec:"] + replicas + ["  template:"] + pod_spec(rng, 4)


def main():
    out, count = sys.argv[1], int(sys.argv[2])
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 96
    rng = random.Random(seed)
    os.makedirs(out, exist_ok=True)
    per_file = 25
    for start in range(0, count, per_file):
        documents = ["\n".join(workload(rng, number)) for number in range(start, min(start + per_file, count))]
        with open(os.path.join(out, f"workloads-{start // per_file:05d}.yaml"), "w") as handle:
            handle.write("\n---\n".join(documents) + "\n")


if __name__ == "__main__":
    main()
