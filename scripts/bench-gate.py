#!/usr/bin/env python3
"""Replays pools of recordings through kprof diff's gate and a plain Welch
t-test (scripts/bench-gate runs it; its comment says what and why).
  bench-gate.py KPROF TMP RUNS SAME SLOW GATE JOBS DOCS_FLAG DOCS POOL...
"""
import concurrent.futures
import hashlib
import json
import math
import os
import random
import re
import shlex
import statistics
import subprocess
import sys
import time

(kprof, tmp, runs_arg, nsame, nslow, gate, jobs, docs_flag, docs) = sys.argv[1:10]
pools = sys.argv[10:]
ks = [int(k) for k in runs_arg.split()]
nsame, nslow, jobs = int(nsame), int(nslow), int(jobs)
gate = shlex.split(gate)
ALPHAS = (0.01, 0.05)


def gate_rule(args):
    """The gate's growth rule: ("share", points) for --fail-above N, ("cpu",
    percent) for --fail-above N%; a test that is to stand in for the gate
    must pass it too (a function that grew less fails no gate)."""
    for i, a in enumerate(args):
        value = a.split("=", 1)[1] if a.startswith("--fail-above=") else (
            args[i + 1] if a == "--fail-above" and i + 1 < len(args) else None)
        if value is not None:
            return ("cpu", float(value[:-1])) if value.endswith("%") else ("share", float(value))
    return ("share", 0.0)


RULE = gate_rule(gate)


def grew(what, base, new):
    """Whether the mean grew past the gate's rule (what: share or cpu)."""
    mb, mn = statistics.fmean(base), statistics.fmean(new)
    if what != RULE[0]:
        return mn > mb
    return mn - mb > RULE[1] if what == "share" else mb > 0 and 100 * (mn / mb - 1) > RULE[1]


def read_env(pool):
    """pool.env's KEY=value lines (as scripts/bench-gate wrote them)."""
    env = {}
    with open(os.path.join(pool, "pool.env")) as f:
        for line in f:
            key, _, value = line.rstrip("\n").partition("=")
            if key:
                env[key] = value.strip('"')
    return env


# Student's t distribution, for Welch's test: the regularized incomplete beta
# function by its continued fraction (Numerical Recipes' betacf), as there is
# no scipy to rely on.
def betacf(a, b, x):
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1, a - 1
    c, d = 1.0, 1 - qab * x / qap
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1 + aa * d
        d = 1 / (d if abs(d) > tiny else tiny)
        c = 1 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1 + aa * d
        d = 1 / (d if abs(d) > tiny else tiny)
        c = 1 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-12:
            break
    return h


def betai(a, b, x):
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log(1 - x))
    if x < (a + 1) / (a + b + 2):
        return front * betacf(a, b, x) / a
    return 1 - front * betacf(b, a, 1 - x) / b


def t_upper(t, df):
    """P(T > t) for Student's t with df degrees of freedom."""
    tail = 0.5 * betai(df / 2, 0.5, df / (df + t * t))
    return tail if t > 0 else 1 - tail


def welch_p(base, new):
    """One-sided p of Welch's t-test that new's mean is above base's."""
    mb, mn = statistics.fmean(base), statistics.fmean(new)
    vb, vn = statistics.variance(base) / len(base), statistics.variance(new) / len(new)
    if vb + vn == 0:
        return 0.0 if mn > mb else 1.0
    t = (mn - mb) / math.sqrt(vb + vn)
    df = (vb + vn) ** 2 / (vb ** 2 / (len(base) - 1) + vn ** 2 / (len(new) - 1))
    return t_upper(t, df)


def run_stats(path, fn):
    """The function's total share (% of the run's samples) and CPU seconds
    in one recording (the samples and the CPU time of the stacks it is on),
    and the frames above it, below it and on stacks without it."""
    out = {}
    above, below, elsewhere = set(), set(), set()
    for value in ("samples", "cpu"):
        args = [kprof, "report", "-f", "folded", path]
        if value == "cpu":
            args[2:2] = ["--value", "cpu"]
        p = subprocess.run(args, capture_output=True, text=True, check=True)
        total = on = 0
        for line in p.stdout.splitlines():
            stack, _, count = line.rpartition(" ")
            frames = stack.split(";")
            total += int(count)
            if fn in frames:
                on += int(count)
                i = frames.index(fn)
                above.update(frames[:i])
                below.update(frames[i + 1:])
            elif "[truncated]" not in frames:
                # (a stack cut short may have lost the function above)
                elsewhere.update(frames)
        out[value] = (on, total)
    return (100 * out["samples"][0] / out["samples"][1], out["cpu"][0] / 1e6,
            above, below, elsewhere)


def side(dirname, pool, runs):
    """A directory of hard links to the runs (one run: the file itself)."""
    if len(runs) == 1:
        return os.path.join(pool, runs[0])
    os.makedirs(dirname)
    for i, r in enumerate(runs):
        os.link(os.path.join(pool, r), os.path.join(dirname, f"run{i}.kprof"))
    return dirname


counter = iter(range(1 << 62))


def diff(pool, fn, a, b):
    """The gate on base runs a against new runs b: its exit code, the
    functions it names, the changed function's row (JSON), its time."""
    work = os.path.join(tmp, f"cmp{next(counter)}")
    os.mkdir(work)
    t = time.monotonic()
    p = subprocess.run([kprof, "diff", *gate, "--top", "0", "-f", "json",
                        side(os.path.join(work, "a"), pool, a),
                        side(os.path.join(work, "b"), pool, b)],
                       capture_output=True, text=True)
    elapsed = time.monotonic() - t
    subprocess.run(["rm", "-rf", work], check=True)
    if p.returncode not in (0, 3):
        sys.exit(f"kprof diff failed ({p.returncode}): {p.stderr}")
    d = json.loads(p.stdout)
    regs = [r["function"] for r in d["gate"]["regressions"]]
    row = [f["total"] for f in d["functions"] if f["function"] == fn]
    return p.returncode, regs, row[0] if row else None, elapsed


def pct(n, of):
    return f"{100 * n / of:.0f}%" if of else "-"


def replay(pool, executor):
    env = read_env(pool)
    name = os.path.basename(os.path.normpath(pool))
    fn = env["FUNCTION"]
    base = [f"base{i}.kprof" for i in range(1, int(env["BASE_RUNS"]) + 1)]
    slow = [f"slow{i}.kprof" for i in range(1, int(env["SLOW_RUNS"]) + 1)]
    stats = dict(zip(base + slow, executor.map(
        lambda r: run_stats(os.path.join(pool, r), fn), base + slow)))
    # the changed function's growth is also that of its callers (the
    # benchmark's, pool.env's ANCESTORS, and whatever was above it in the
    # base runs: the program's entry) and of what it alone calls (below it
    # and nowhere else: its inline frames, its own callees); naming those
    # beside it is no error
    above = set(env["ANCESTORS"].split()).union(*(stats[r][2] for r in base))
    below = set().union(*(stats[r][3] for r in base))
    elsewhere = set().union(*(stats[r][4] for r in base))
    ancestors = above | (below - elsewhere)
    rows = []
    for k in ks:
        if 2 * k > len(base) or k > len(slow):
            continue
        rng = random.Random(f"{name}/{k}/same")
        same = [rng.sample(base, 2 * k) for _ in range(nsame)]
        same = [(r[:k], r[k:]) for r in same]
        rng = random.Random(f"{name}/{k}/slow")
        slower = [(rng.sample(base, k), rng.sample(slow, k)) for _ in range(nslow)]
        results = list(executor.map(lambda ab: diff(pool, fn, *ab), same + slower))
        rsame, rslow = results[:nsame], results[nsame:]
        false_alarms = sum(rc == 3 for rc, _, _, _ in rsame)
        named = sum(rc == 3 and fn in regs for rc, regs, _, _ in rslow)
        alone = sum(rc == 3 and fn in regs and not set(regs) - {fn} - ancestors
                    for rc, regs, _, _ in rslow)
        # the Welch reference on the same draws: share, CPU a run
        welch = {}
        for what, i in (("share", 0), ("cpu", 1)):
            if k < 2:
                continue
            for alpha in ALPHAS:
                caught = sum(welch_p([stats[r][i] for r in a], [stats[r][i] for r in b]) < alpha
                             for a, b in slower)
                false = sum(welch_p([stats[r][i] for r in a], [stats[r][i] for r in b]) < alpha
                            for a, b in same)
                welch[what, alpha] = (caught, false)
            # as a gate: its p and the gate's growth rule on the gate's measure
            if what == RULE[0]:
                def gated(a, b):
                    xa, xb = [stats[r][i] for r in a], [stats[r][i] for r in b]
                    return welch_p(xa, xb) < ALPHAS[0] and grew(what, xa, xb)
                welch["gated", ALPHAS[0]] = (sum(gated(a, b) for a, b in slower),
                                             sum(gated(a, b) for a, b in same))
        times = sorted(el for _, _, _, el in results)
        rows.append(dict(k=k, false_alarms=false_alarms, alone=alone, named=named, welch=welch,
                         median_ms=1000 * times[len(times) // 2]))
    shares = [[stats[r][i] for r in runs] for runs in (base, slow) for i in (0, 1)]
    return dict(name=name, env=env, rows=rows, share=(statistics.fmean(shares[0]),
                statistics.fmean(shares[2])), cpu=(statistics.fmean(shares[1]),
                statistics.fmean(shares[3])), cv=(statistics.stdev(shares[0]) /
                statistics.fmean(shares[0]), statistics.stdev(shares[1]) /
                statistics.fmean(shares[1])))


def cached_replay(pool, executor):
    """replay(), kept in CACHE (a directory, when set) under a key of what
    decides its result: kprof itself, this script, the pool and the draws
    asked for."""
    cache = os.environ.get("CACHE")
    if not cache:
        return replay(pool, executor)
    h = hashlib.sha256()
    for path in (kprof, __file__):  # kprof, and how this script replays
        with open(path, "rb") as f:
            h.update(f.read())
    with open(os.path.join(pool, "pool.env"), "rb") as f:
        h.update(f.read())
    h.update(repr((os.path.realpath(pool), ks, nsame, nslow, gate)).encode())
    path = os.path.join(cache, h.hexdigest() + ".json")
    if os.path.exists(path):
        with open(path) as f:
            p = json.load(f)
        for r in p["rows"]:
            r["welch"] = {(w, float(a)): tuple(v) for w, a, v in r["welch"]}
        return p
    p = replay(pool, executor)
    os.makedirs(cache, exist_ok=True)
    saved = dict(p, rows=[dict(r, welch=[(w, a, v) for (w, a), v in r["welch"].items()])
                          for r in p["rows"]])
    with open(path + ".tmp", "w") as f:
        json.dump(saved, f)
    os.replace(path + ".tmp", path)
    return p


start = time.monotonic()
with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as executor:
    done = [cached_replay(p, executor) for p in pools]
elapsed = time.monotonic() - start

table = ["| pool: benchmark, neighbour, change | runs a side | same build: gate fails "
         "| slower: caught, named alone | caught at all "
         "| Welch on its share: caught, false | Welch on its CPU a run: caught, false "
         "| Welch as a gate: caught, false "
         "| its share, base -> slower (CV a run) | its CPU a run (CV a run) | one kprof diff |",
         "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
for p in done:
    env = p["env"]
    # a JavaScript frame's script without its directory (the checkout's)
    fn = re.sub(r" /\S*/", " ", env["FUNCTION"])
    label = (f"{p['name']}: {env['SHAPE']} (`{fn}`), {env['NEIGHBOUR']}, "
             f"+{env['SLOWDOWN']}% work")
    for r in p["rows"]:
        cells = []
        for what in ("share", "cpu"):
            if (what, 0.01) not in r["welch"]:
                cells.append("-")
                continue
            c1, f1 = r["welch"][what, 0.01]
            c5, f5 = r["welch"][what, 0.05]
            cells.append(f"{pct(c1, nslow)}, {pct(f1, nsame)} (0.05: {pct(c5, nslow)}, "
                         f"{pct(f5, nsame)})")
        g = r["welch"].get(("gated", 0.01))
        cells.append(f"{pct(g[0], nslow)}, {pct(g[1], nsame)}" if g else "-")
        (bsh, nsh), (bs, ns), (cvsh, cvs) = p["share"], p["cpu"], p["cv"]
        table.append(
            f"| {label} | {r['k']} | {r['false_alarms']} of {nsame} "
            f"({100 * r['false_alarms'] / nsame:.1f}%) "
            f"| {r['alone']} of {nslow} ({pct(r['alone'], nslow)}) | {r['named']} of {nslow} "
            f"| {cells[0]} | {cells[1]} | {cells[2]} "
            f"| {bsh:.1f}% -> {nsh:.1f}% ({100 * cvsh:.0f}%) "
            f"| {bs:.3f} -> {ns:.3f} s, {100 * (ns - bs) / bs:+.0f}% ({100 * cvs:.0f}%) "
            f"| {r['median_ms']:.0f} ms |")
        label = ""
note = [f"`kprof diff {' '.join(gate)}` on {nsame} same-build and {nslow} slower draws a row, "
        "drawn at random from each pool (seeded: a replay draws the same). \"Named alone\": "
        "the gate failed naming the changed function and nothing else but its callers and "
        "what it alone calls (its inline frames), whose growth is its own. The Welch "
        "columns are one-sided tests at alpha 0.01 (the gate's) and, in brackets, 0.05, "
        "of the changed function's total share a run and of its CPU time a run, on the "
        "same draws; \"as a gate\" is the first at alpha 0.01 that also asks the mean to "
        "grow past the gate's --fail-above in the gate's measure (the gate's own rule: a "
        "function that grew less fails no gate). The CVs are of the base runs. Pools (40 + 40 runs unless said, "
        "alternating, `kprof -q -F 999 -o X.kprof -- ./bench`):"]
for p in done:
    env = p["env"]
    note.append(f"{p['name']}: {env['BASE_RUNS']} + {env['SLOW_RUNS']} runs, "
                f"{env.get('RECORDED', 'when unknown')}, commit {env.get('COMMIT', 'unknown')}.")
out = "\n".join(table) + "\n\n" + " ".join(note) + "\n"
print(out)
print(f"replayed {len(done)} pools in {elapsed:.0f} s", file=sys.stderr)
if docs_flag == "--docs":
    text = open(docs).read()
    begin, end = "<!-- bench-gate: begin -->\n", "<!-- bench-gate: end -->"
    i, j = text.index(begin) + len(begin), text.index(end)
    with open(docs + ".tmp", "w") as f:
        f.write(text[:i] + "\n" + out + "\n" + text[j:])
    os.replace(docs + ".tmp", docs)
    print(f"written into {docs}", file=sys.stderr)
