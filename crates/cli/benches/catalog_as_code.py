#!/usr/bin/env python3
"""Issue 39's speed targets, measured as users meet them: the release binary run as a
process, each figure set against the machine's own limit measured in the same run.

    cargo build --release -p tributary-cli
    python3 crates/cli/benches/catalog_as_code.py target/release/tributary [--quick]

It prints one line per measurement and a summary table (Markdown, for BENCHMARKS.md):

- the disk's raw durable-write rate: `write` of 512 bytes + `fdatasync`, in a loop, in
  the directory the catalogs live in (before and after the rest; both are shown);
- start-up: `run -c "SELECT 1"` on a catalog that does not exist yet, and on one of a
  profile and 100 tables (median wall time from exec to exit, and median peak RSS);
- `run` of N `CREATE TABLE` statements into a new catalog, and `apply` of the same
  statements (one batch): statements per second, as a ratio of the fdatasync rate;
- `check` of 10,000 statements over a catalog of 10,000 tables: time and peak RSS;
- `plan` of 10,000 unchanged tables against a catalog of 100,000: median time of 5.

Catalogs are sled directories under a temporary directory on the same disk as the
working directory (`$TMPDIR` is not used: it may be a different device).
"""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

QUICK = "--quick" in sys.argv
ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
BINARY = os.path.abspath(ARGS[0]) if ARGS else "target/release/tributary"
WORK = tempfile.mkdtemp(prefix="tributary-bench-", dir=os.getcwd())
RESULTS = []


def say(line: str) -> None:
    print(line, flush=True)


def fdatasync_rate(count: int = 2000) -> float:
    """Durable 512-byte writes per second, in the catalogs' directory."""
    path = os.path.join(WORK, "fdatasync-probe")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    block = b"x" * 512
    try:
        began = time.perf_counter()
        for _ in range(count):
            os.write(fd, block)
            os.fdatasync(fd)
        return count / (time.perf_counter() - began)
    finally:
        os.close(fd)
        os.unlink(path)


def run(args, stdin_path=None):
    """Run the binary; (seconds, peak RSS in MiB, exit status, stdout)."""
    env = dict(os.environ, NO_COLOR="1", HOME=WORK, XDG_DATA_HOME=WORK)
    env.pop("TRIBUTARY_CATALOG", None)
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    out_path = os.path.join(WORK, "stdout")
    with open(out_path, "wb") as out:
        began = time.perf_counter()
        proc = subprocess.Popen([BINARY] + args, stdin=stdin, stdout=out, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - began
    if stdin_path:
        stdin.close()
    with open(out_path, "rb") as f:
        text = f.read().decode("utf-8", "replace")
    return elapsed, usage.ru_maxrss / 1024.0, os.waitstatus_to_exitcode(status), text


def table(i: int, prefix: str = "t") -> str:
    return (
        f"CREATE TABLE {prefix}{i:06} (id BIGINT NOT NULL, v TEXT, amount DOUBLE, ts TIMESTAMP NOT NULL, "
        f"WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH (connector = 'kafka', "
        f"connection_profile = 'k', topic = 't{i}', type = 'source', format = 'json');"
    )


PROFILE = (
    "CREATE CONNECTION PROFILE k WITH (connector = 'kafka', "
    "bootstrap_servers = 'localhost:9092', validate = false);"
)


def script(path: str, count: int, prefix: str = "t", start: int = 0, profile: bool = True) -> str:
    with open(path, "w") as f:
        if profile:
            f.write(PROFILE + "\n")
        for i in range(start, start + count):
            f.write(table(i, prefix) + "\n")
    return path


def catalog_of(count: int, name: str) -> str:
    """A catalog of a profile and `count` tables, made by `apply` (one batch)."""
    cat = os.path.join(WORK, name)
    sql = script(os.path.join(WORK, f"{name}.sql"), count)
    _, _, code, _ = run(["--catalog", cat, "-q", "apply", sql])
    assert code == 0, f"apply of {count} tables failed"
    return cat


def record(what, figure, target, verdict):
    RESULTS.append((what, figure, target, verdict))
    say(f"{what}: {figure} (target {target}: {verdict})")


def main() -> None:
    say(f"binary: {BINARY}; work directory: {WORK}")
    sync_before = fdatasync_rate()
    say(f"raw write+fdatasync: {sync_before:,.0f}/s")

    # Start-up.
    runs = 10 if QUICK else 30
    small = catalog_of(100, "small")
    for _ in range(3):
        run(["--catalog", small, "-q", "run", "-c", "SELECT 1"])
    empty_t, empty_m, full_t, full_m = [], [], [], []
    for i in range(runs):
        fresh = os.path.join(WORK, f"fresh-{i}")
        t, m, code, _ = run(["--catalog", fresh, "-q", "run", "-c", "SELECT 1"])
        assert code == 0
        empty_t.append(t)
        empty_m.append(m)
        shutil.rmtree(fresh, ignore_errors=True)
        t, m, code, _ = run(["--catalog", small, "-q", "run", "-c", "SELECT 1"])
        assert code == 0
        full_t.append(t)
        full_m.append(m)
    et, em = statistics.median(empty_t), statistics.median(empty_m)
    ft, fm = statistics.median(full_t), statistics.median(full_m)
    say(f"start-up, new catalog: {et*1000:.1f} ms, {em:.0f} MiB; 100 tables: {ft*1000:.1f} ms, {fm:.0f} MiB")
    record("start-up time, 100 tables / new catalog", f"{ft*1000:.1f} / {et*1000:.1f} ms = {ft/et:.2f}x", "≤ 1.3x", "met" if ft / et <= 1.3 else "not met")
    record("start-up peak RSS, 100 tables / new catalog", f"{fm:.0f} / {em:.0f} MiB = {fm/em:.2f}x", "≤ 1.3x", "met" if fm / em <= 1.3 else "not met")

    # run and apply of N statements.
    n = 3000 if QUICK else 10000
    sql = script(os.path.join(WORK, "n.sql"), n)
    t, _, code, _ = run(["--catalog", os.path.join(WORK, "by-run"), "-q", "run", sql])
    assert code == 0
    run_rate = (n + 1) / t
    t, _, code, _ = run(["--catalog", os.path.join(WORK, "by-apply"), "-q", "apply", sql])
    assert code == 0
    apply_rate = (n + 1) / t
    sync_mid = fdatasync_rate()
    sync = (sync_before + sync_mid) / 2
    say(f"run: {run_rate:,.0f} statements/s; apply: {apply_rate:,.0f}/s; fdatasync {sync_mid:,.0f}/s now, {sync:,.0f}/s mean")
    record(f"run of {n:,} CREATE TABLE", f"{run_rate:,.0f}/s = {run_rate/sync:.2f}x fdatasync ({sync:,.0f}/s)", "≥ 0.8x", "met" if run_rate / sync >= 0.8 else "not met")
    record(f"apply of the same {n:,} tables", f"{apply_rate:,.0f}/s = {apply_rate/sync:.2f}x fdatasync", "≥ 5x", "met" if apply_rate / sync >= 5 else "not met")

    # check of 10,000 statements over 10,000 tables.
    ten_k = os.path.join(WORK, "by-apply") if n == 10000 else catalog_of(10000, "ten-k")
    checked = script(os.path.join(WORK, "check.sql"), 10000, prefix="c", profile=False)
    t, m, code, _ = run(["--catalog", ten_k, "-q", "check", checked])
    assert code == 0, "check failed"
    record("check of 10,000 statements over 10,000 tables", f"{t:.2f} s, {m:.0f} MiB", "< 1.33 s, < 234 MB", "met" if t < 1.33 and m * 1.048576 < 234 else "not met")

    # plan of 10,000 unchanged tables against 100,000.
    if not QUICK:
        big = catalog_of(100000, "hundred-k")
        unchanged = script(os.path.join(WORK, "plan.sql"), 10000)
        # The median of five: on a shared machine one run can be a third slower.
        runs = []
        for _ in range(5):
            t, m, code, out = run(["--catalog", big, "-q", "plan", unchanged])
            assert code == 0, f"plan found changes: {out[:400]}"
            runs.append((t, m))
        times = sorted(t for t, _ in runs)
        t, m = statistics.median(times), max(m for _, m in runs)
        record("plan of 10,000 unchanged tables against 100,000", f"{t:.2f} s (median of 5; {times[0]:.2f}-{times[-1]:.2f}), {m:.0f} MiB", "< 2 s", "met" if t < 2 else "not met")

    say("\n| what | measured | target | verdict |\n|---|---|---|---|")
    for what, figure, target, verdict in RESULTS:
        say(f"| {what} | {figure} | {target} | {verdict} |")
    say(f"\nraw write+fdatasync: {sync_before:,.0f}/s before, {sync_mid:,.0f}/s after the scripts")


try:
    main()
finally:
    shutil.rmtree(WORK, ignore_errors=True)
