#!/usr/bin/env python3
"""Renders bench/RESULTS.md from the measurements scripts/bench wrote (hyperfine JSON exports and peak RSS
files), with the machine, the tool versions and the date, and checks the ratios against the targets."""
import argparse
import datetime
import json
import os
import platform
import subprocess


def mean(results, name):
    path = os.path.join(results, name)
    if not os.path.exists(path):
        return {}
    data = json.load(open(path))
    return {run["command"]: run["mean"] for run in data["results"]}


def rss_mib(results, label):
    path = os.path.join(results, f"rss-{label}.txt")
    if not os.path.exists(path):
        return None
    text = open(path).read().split()
    return int(text[-1]) / 1024 if text else None


def version(command):
    try:
        output = subprocess.run(command, capture_output=True, text=True, timeout=120)
        return (output.stdout or output.stderr).strip().splitlines()[0]
    except Exception as error:  # noqa: BLE001 - reported, not fatal
        return f"unavailable ({error})"


def count_files(path, extensions):
    files = lines = size = 0
    for directory, _, names in os.walk(path):
        for name in names:
            if name.endswith(extensions):
                full = os.path.join(directory, name)
                files += 1
                size += os.path.getsize(full)
                with open(full, "rb") as handle:
                    lines += handle.read().count(b"\n")
    return files, lines, size


def fmt_ms(seconds):
    return f"{seconds * 1000:.1f} ms" if seconds is not None else "n/a"


def fmt_mib(value):
    return f"{value:.0f} MiB" if value is not None else "n/a"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("results")
    parser.add_argument("out")
    parser.add_argument("--corpus")
    parser.add_argument("--manifests")
    parser.add_argument("--monorepo", nargs="+")
    parser.add_argument("--workloads")
    parser.add_argument("--capslint")
    parser.add_argument("--series", default="")
    args = parser.parse_args()
    r = args.results

    py_files, py_lines, py_bytes = count_files(args.corpus, (".py",))
    k8s_files, _, k8s_bytes = count_files(args.manifests, (".yaml", ".yml"))
    mono_files = mono_lines = 0
    for path in args.monorepo:
        files, lines, _ = count_files(path, (".py",))
        mono_files += files
        mono_lines += lines

    fast = mean(r, "python-fast.json")
    semgrep = mean(r, "python-semgrep.json")
    k8s = mean(r, "manifests-capslint.json")
    checkov = mean(r, "manifests-checkov.json")
    mono = mean(r, "monorepo.json")

    def ratio(other, ours):
        return other / ours if other and ours else None

    rows = []
    checks = []

    def target(name, value, wanted, ok):
        status = "n/a" if value is None else ("met" if ok(value) else "MISSED")
        checks.append(f"| {name} | {wanted} | {value if value is not None else 'n/a'} | {status} |")

    cap_py, ruff_py = fast.get("capslint"), fast.get("ruff")
    rows.append(f"| Python corpus | capslint | {fmt_ms(cap_py)} | {fmt_mib(rss_mib(r, 'capslint-python'))} | "
                f"{py_files / cap_py:.0f} files/s |" if cap_py else "| Python corpus | capslint | n/a | | |")
    rows.append(f"| Python corpus | ruff `--select B006` | {fmt_ms(ruff_py)} | {fmt_mib(rss_mib(r, 'ruff-python'))} | "
                f"{py_files / ruff_py:.0f} files/s |" if ruff_py else "| Python corpus | ruff | n/a | | |")
    sem = semgrep.get("semgrep")
    rows.append(f"| Python corpus | semgrep (bench/semgrep.yml) | {fmt_ms(sem)} | {fmt_mib(rss_mib(r, 'semgrep-python'))} | "
                f"{py_files / sem:.0f} files/s |" if sem else "| Python corpus | semgrep | not run | | |")
    cap_k8s, chk = k8s.get("capslint"), checkov.get("checkov")
    rows.append(f"| {args.workloads} workloads | capslint | {fmt_ms(cap_k8s)} | {fmt_mib(rss_mib(r, 'capslint-manifests'))} | "
                f"{k8s_files / cap_k8s:.0f} files/s |" if cap_k8s else "| manifests | capslint | n/a | | |")
    rows.append(f"| {args.workloads} workloads | checkov `--framework kubernetes` | {fmt_ms(chk)} | "
                f"{fmt_mib(rss_mib(r, 'checkov-manifests'))} | {k8s_files / chk:.1f} files/s |" if chk else
                "| manifests | checkov | not run | | |")
    cap_mono, ruff_mono = mono.get("capslint"), mono.get("ruff")
    rows.append(f"| monorepo ({mono_lines:,} lines) | capslint | {fmt_ms(cap_mono)} | {fmt_mib(rss_mib(r, 'capslint-monorepo'))} | "
                f"{mono_files / cap_mono:.0f} files/s |" if cap_mono else "| monorepo | capslint | n/a | | |")
    rows.append(f"| monorepo ({mono_lines:,} lines) | ruff `--select B006` | {fmt_ms(ruff_mono)} | "
                f"{fmt_mib(rss_mib(r, 'ruff-monorepo'))} | {mono_files / ruff_mono:.0f} files/s |" if ruff_mono else
                "| monorepo | ruff | n/a | | |")

    ruff_ratio = ratio(cap_py, ruff_py)
    target("capslint / ruff wall time, Python corpus", None if ruff_ratio is None else round(ruff_ratio, 2),
           "<= 0.5", lambda v: v <= 0.5)
    mono_ratio = ratio(cap_mono, ruff_mono)
    target("capslint / ruff wall time, monorepo", None if mono_ratio is None else round(mono_ratio, 2),
           "<= 0.5", lambda v: v <= 0.5)
    sem_ratio = ratio(semgrep.get("semgrep"), semgrep.get("capslint"))
    target("semgrep / capslint wall time", None if sem_ratio is None else round(sem_ratio), ">= 50", lambda v: v >= 50)
    chk_ratio = ratio(chk, cap_k8s)
    target("checkov / capslint wall time", None if chk_ratio is None else round(chk_ratio), ">= 50", lambda v: v >= 50)
    for label, what in (("python", "Python corpus"), ("manifests", "manifests")):
        fix_times = mean(r, f"fix-{label}.json")
        fix_ratio = ratio(fix_times.get("fix"), fix_times.get("check"))
        count_path = os.path.join(r, f"fix-{label}-count.txt")
        fixed = open(count_path).read().strip().splitlines()[-1:] if os.path.exists(count_path) else []
        target(f"`--fix --unsafe-fixes` / `check` wall time, {what} ({fixed[0] if fixed else 'n/a'})",
               None if fix_ratio is None else round(fix_ratio, 2), "<= 1.5", lambda v: v <= 1.5)
    mono_rss = rss_mib(r, "capslint-monorepo")
    target("capslint peak RSS on the monorepo (MiB)", None if mono_rss is None else round(mono_rss), "< 200",
           lambda v: v < 200)

    series_rows = []
    for label in args.series.split():
        lines = int(open(os.path.join(r, f"lines-{label}.txt")).read().strip())
        seconds = mean(r, f"series-{label}.json").get(label)
        if seconds:
            series_rows.append((lines, seconds, rss_mib(r, f"capslint-{label}")))
    series_rows.sort()
    series_text = ["| lines of Python | wall time | per million lines | peak RSS |", "| ---: | ---: | ---: | ---: |"]
    for lines, seconds, rss in series_rows:
        series_text.append(f"| {lines:,} | {fmt_ms(seconds)} | {seconds / lines * 1e6 * 1000:.0f} ms | {fmt_mib(rss)} |")
    if len(series_rows) >= 3:
        # Least squares fit of time = fixed + per_line * lines: a straight line with a good fit is linear growth.
        xs = [lines for lines, _, _ in series_rows]
        ys = [seconds for _, seconds, _ in series_rows]
        n = len(xs)
        mean_x, mean_y = sum(xs) / n, sum(ys) / n
        sxx = sum((x - mean_x) ** 2 for x in xs)
        slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)) / sxx
        intercept = mean_y - slope * mean_x
        residual = sum((y - (intercept + slope * x)) ** 2 for x, y in zip(xs, ys))
        total = sum((y - mean_y) ** 2 for y in ys)
        r2 = 1 - residual / total if total else 1.0
        series_text.append("")
        series_text.append(
            f"Fit: time = {intercept * 1000:.1f} ms + {slope * 1e6 * 1000:.1f} ms per million lines, "
            f"R² = {r2:.4f} (1 is a perfect straight line: linear growth; the fixed part is process start, "
            "the walk of the other files and the thread pool)."
        )

    cpu = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = "unknown"
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                memory = f"{int(line.split()[1]) // 1024 // 1024} GiB"
    except OSError:
        pass

    text = f"""# Benchmark results

Produced by `scripts/bench` on {datetime.date.today().isoformat()}; rerun it to reproduce (the corpus is
pinned by version and sha256, the synthetic inputs are generated deterministically).

## Machine and versions

- {os.cpu_count()} CPUs ({cpu}), {memory}, {platform.system()} {platform.release()}
- {version([args.capslint, '--version'])}
- {version(['ruff', '--version'])}
- semgrep {version(['semgrep', '--version'])}
- checkov {version(['checkov', '--version'])}
- {version(['hyperfine', '--version'])}

## Inputs

- Python corpus: {py_files:,} files, {py_lines:,} lines, {py_bytes / 1e6:.1f} MB (sdists of scikit-learn,
  LightGBM, XGBoost, joblib and apache-airflow-providers-cncf-kubernetes).
- Manifests: {args.workloads} generated workloads in {k8s_files:,} multi-document files, {k8s_bytes / 1e6:.1f} MB.
- Monorepo: {mono_files:,} Python files, {mono_lines:,} lines (copies of the corpus).

Every tool runs on the same files; ruff with `--no-cache`, capslint with `--isolated`; wall times are
hyperfine means (warm file cache).

## Results

| input | tool | wall time | peak RSS | throughput |
| --- | --- | ---: | ---: | ---: |
{chr(10).join(rows)}

## Targets

| target | wanted | measured | |
| --- | --- | --- | --- |
{chr(10).join(checks)}

## Linearity

{chr(10).join(series_text)}
"""
    with open(args.out, "w") as handle:
        handle.write(text)


if __name__ == "__main__":
    main()
