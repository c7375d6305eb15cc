#!/usr/bin/env python3
"""tools/qemu/vm-bench's figures, from the guest's serial log of one configuration: the BENCH
lines (per 10 s window, the starts, exec -> first frame on screen, the execs) as
min/median/max per scenario and gauged's ratios against Plymouth; with --sched its
BENCH-SCHED trace, with --timeline its BENCH-TIMELINE events (the full list kept in
OUT/timeline-DAEMON.txt), with --perf the BENCH-PERF reports. What each figure is:
tools/qemu/vm-bench's header. Standard library only.

Usage: tools/qemu/vm-bench-report.py CONFIG SERIAL-LOG OUT
"""
import os
import re
import statistics
import sys

config, path, out_dir = sys.argv[1], sys.argv[2], sys.argv[3]
rows, starts, rss, perf, onscreen, execs = {}, {}, {}, [], {}, {}
for line in open(path, errors="replace"):
    line = line.strip()
    if line.startswith("BENCH-PERF"):
        kind, _, text = line.partition(" ")
        perf.append((kind, text))
        continue
    if not line.startswith("BENCH "):
        continue
    parts = line.split()
    daemon, scenario = parts[1], parts[2]
    fields = dict(p.split("=", 1) for p in parts[3:])
    if scenario == "start":
        starts.setdefault(daemon, []).append(fields)
    elif scenario == "screen":
        onscreen.setdefault(daemon, []).append(fields)
    elif daemon == "exec":
        execs[scenario] = float(fields["ms"])
    elif "rss" in fields:
        rss[(daemon, scenario)] = int(fields["rss"])
    else:
        rows.setdefault((daemon, scenario), []).append(fields)

def stats(values):
    if not values:
        return None
    return min(values), statistics.median(values), max(values)

def fmt(s, digits=0):
    if s is None:
        return "n/a"
    lo, mid, hi = s
    return f"{mid:.{digits}f} ({lo:.{digits}f}-{hi:.{digits}f})"

print(f"\n{config}: per 10 s window, median (min-max)")
header = (f"{'daemon scenario':<32} {'n':>2} {'cpu ms':>17} {'sched ms':>20} {'vcs':>13} {'ivcs':>13} {'frames':>13}"
          f" {'cs/frame':>8} {'irqs':>6} {'rss MB':>7}")
print(header)
summary = {}
for (daemon, scenario), windows in rows.items():
    get = lambda key: [float(w[key]) for w in windows if w.get(key, "-") != "-"]
    cpu, sched, vcs, ivcs, frames = get("cpu"), get("sched"), get("vcs"), get("ivcs"), get("frames")
    irqs = get("irqs")
    summary[(daemon, scenario)] = (stats(cpu), stats(sched), stats(vcs), stats(ivcs))
    per = "n/a"
    if frames and sum(frames) > 0:
        per = f"{(sum(vcs) + sum(ivcs)) / sum(frames):.2f}"
    r = rss.get((daemon, scenario))
    print(f"{daemon + ' ' + scenario:<32} {len(windows):>2} {fmt(stats(cpu)):>17} {fmt(stats(sched), 1):>20} "
          f"{fmt(stats(vcs)):>13} {fmt(stats(ivcs)):>13} {fmt(stats(frames)):>13} {per:>8} "
          f"{(f'{statistics.median(irqs):.0f}' if irqs else 'n/a'):>6} "
          f"{(f'{r / 1000:.1f}' if r else 'n/a'):>7}")
for daemon, runs in starts.items():
    ready = [float(r["ready"]) for r in runs if r.get("ready", "-") != "-"]
    first = [float(r["first"]) for r in runs if r.get("first", "-") != "-"]
    rtt = [float(r["rtt"]) for r in runs if r.get("rtt", "-") != "-"]
    print(f"{daemon} start ({len(runs)} fresh starts, first cold): exec -> ping answered {fmt(stats(ready), 1)} ms"
          f" (cold {runs[0].get('ready')}; a ping alone takes {fmt(stats(rtt), 1)} ms),"
          f" exec -> first frame presented {fmt(stats(first), 1)} ms")
base = summary.get(("plymouth", "animating"))
if base:
    print("ratios against Plymouth spinner (median of each):")
    for (daemon, scenario), (cpu, sched, vcs, ivcs) in summary.items():
        if daemon == "plymouth":
            continue
        def ratio(a, b):
            return f"{a[1] / b[1]:.2f}x" if a and b and b[1] > 0 else "n/a"
        cs = (vcs[1] + ivcs[1]) if vcs and ivcs else None
        pcs = base[2][1] + base[3][1] if base[2] and base[3] else None
        print(f"  {daemon + ' ' + scenario:<32} cpu {ratio(cpu, base[0]):>6}  sched {ratio(sched, base[1]):>6}"
              f"  context switches {(f'{cs / pcs:.2f}x' if cs is not None and pcs else 'n/a'):>6}")
gs = starts.get("gauged", [])[1:]
ps = starts.get("plymouth", [])[1:]
if gs and ps:
    g = statistics.median(float(r["ready"]) for r in gs)
    p = statistics.median(float(r["ready"]) for r in ps)
    print(f"  exec -> ready, warm (starts 2-3): gauged {g:.1f} ms, Plymouth {p:.1f} ms: {g / p:.2f}x")
first = {}
for daemon, runs in onscreen.items():
    values = [float(r["first"]) for r in runs if r.get("first", "-") != "-"]
    first[daemon] = stats(values)
    print(f"{daemon} exec -> first frame on screen ({len(runs)} warm starts, kernel trace): {fmt(stats(values), 1)} ms")
if first.get("gauged") and first.get("plymouth"):
    pairs = [float(g["first"]) / float(p["first"]) for g, p in zip(onscreen["gauged"], onscreen["plymouth"])
             if g.get("first", "-") != "-" and p.get("first", "-") != "-"]
    print(f"  exec -> first frame on screen: {first['gauged'][1] / first['plymouth'][1]:.2f}x Plymouth's"
          f" (pair by pair: {fmt(stats(pairs), 2)}x)")
if execs:
    print("one exec in the guest, mean of 10 (ms): " + ", ".join(f"{k} {v:.1f}" for k, v in execs.items()))

# --sched: each traced daemon's switches, its DirtyFB calls and the GPU's interrupts.
SCHEDULER = {"trace_event_raw_event_sched_switch", "__traceiter_sched_switch", "__schedule", "schedule",
             "preempt_schedule_common", "__cond_resched", "preempt_schedule_irq", "_cond_resched"}
traces = {}
for line in open(path, errors="replace"):
    if line.startswith("BENCH-SCHED "):
        _, daemon, pid, text = line.rstrip("\n").split(" ", 3)
        traces.setdefault((daemon, int(pid)), []).append(text)
event_re = re.compile(r"\s*(.+?)-(\d+)\s+\[\d+\]\s+\S+\s+([\d.]+): (\S+): ?(.*)")
for (daemon, pid), lines in traces.items():
    flushes, preempted, slept, sites, by, irqs, rects = 0, 0, 0, {}, {}, {}, {}
    kick_to_irq, kick_to_sleep, ioctl_ms = [], [], []
    in_dirtyfb = False
    kick = dirty_at = dirty_start = None
    # Time on the CPU: all of it, in DirtyFB, in interrupt handlers while the daemon ran.
    cpu = {"all": 0.0, "dirtyfb": 0.0, "irq": 0.0}
    since = None   # when the daemon last went on the CPU (None: off it)
    irq_at = None
    stack = None   # collecting the stack of a preemption
    for text in lines:
        if text.startswith(" => "):
            if stack is not None:
                frame = text[4:].strip()
                if frame not in SCHEDULER:
                    stack.append(frame)
                    if len(stack) == 2:
                        site = f"{stack[0]} <- {stack[1]}"
                        sites[site] = sites.get(site, 0) + 1
                        stack = None
            continue
        m = event_re.match(text)
        if not m:
            continue
        comm, who, at, name, rest = m.group(1), int(m.group(2)), float(m.group(3)), m.group(4), m.group(5)
        if name == "<stack trace>" or rest.startswith("<stack trace>"):
            continue
        mine = who == pid
        if name == "sched_switch" and f"next_pid={pid} " in rest:
            since = at
            if in_dirtyfb:
                dirty_at = at
        if mine and name == "dirtyfb":
            flushes += 1
            in_dirtyfb, dirty_at, dirty_start = True, at, at
        elif mine and name == "dirtyfb_done":
            in_dirtyfb = False
            if dirty_at is not None:
                cpu["dirtyfb"] += at - dirty_at
            if dirty_start is not None:
                ioctl_ms.append((at - dirty_start) * 1000)
        elif mine and name == "gpu_notify":
            kick = at
        elif mine and name == "gpu_transfer":
            f = dict(p.split("=") for p in rest.split()[1:] if "=" in p)
            rect = f"{f.get('w')}x{f.get('h')}+{f.get('x')}+{f.get('y')}"
            rects[rect] = rects.get(rect, 0) + 1
        elif name == "irq_handler_entry" and "virtio" in rest and "control" in rest:
            where = ("in its DirtyFB ioctl" if in_dirtyfb else "while it ran") if mine else "while it slept"
            irqs[where] = irqs.get(where, 0) + 1
            if kick is not None:
                kick_to_irq.append((at - kick) * 1000)
        if mine and name == "irq_handler_entry":
            irq_at = at
        elif mine and name == "irq_handler_exit" and irq_at is not None:
            cpu["irq"] += at - irq_at
            if in_dirtyfb:
                cpu["dirtyfb"] -= at - irq_at
            irq_at = None
        if name == "sched_switch" and f"prev_pid={pid} " in rest:
            if since is not None:
                cpu["all"] += at - since
            if in_dirtyfb and dirty_at is not None:
                cpu["dirtyfb"] += at - dirty_at
                dirty_at = None
            since = None
            if "prev_state=R" in rest:
                preempted += 1
                stack = []
                nxt = re.search(r"next_comm=(\S+)", rest).group(1)
                by[nxt] = by.get(nxt, 0) + 1
            else:
                slept += 1
                stack = None
                if kick is not None:
                    kick_to_sleep.append((at - kick) * 1000)
                    kick = None
    med = lambda v: f"{statistics.median(v):.3f} ms" if v else "n/a"
    top = lambda d: ", ".join(f"{k} {v}" for k, v in sorted(d.items(), key=lambda kv: -kv[1])[:3]) or "none"
    print(f"sched trace ({daemon} animating, 2 s): {flushes} DirtyFB calls (median {med(ioctl_ms)} from call to return),"
          f" transfers {top(rects)}")
    print(f"  switched away {slept} times asleep, {preempted} times preempted (by {top(by)}) at: {top(sites)}")
    print(f"  GPU completion interrupts: {top(irqs)}; after the kick (virtio_gpu_notify): interrupt median"
          f" {med(kick_to_irq)}, {daemon} asleep median {med(kick_to_sleep)}")
    per, unit = (flushes, "DirtyFB call") if flushes else (slept, "sleep")
    if per:
        print(f"  on the CPU {cpu['all'] / per * 1000:.3f} ms per {unit}, of which {cpu['dirtyfb'] / per * 1000:.3f} ms"
              f" in DirtyFB and {cpu['irq'] / per * 1000:.3f} ms in interrupt handlers")

# --timeline: one start of each daemon, event by event from its exec to its first frame.
SYSCALLS = {}
for header in ("/usr/include/x86_64-linux-gnu/asm/unistd_64.h", "/usr/include/asm/unistd_64.h"):
    try:
        for text in open(header):
            m = re.match(r"#define __NR_(\w+)\s+(\d+)", text)
            if m:
                SYSCALLS[int(m.group(2))] = m.group(1)
        break
    except OSError:
        pass
timelines, maps = {}, {}
for line in open(path, errors="replace"):
    if line.startswith("BENCH-TIMELINE "):
        _, daemon, text = line.rstrip("\n").split(" ", 2)
        timelines.setdefault(daemon, []).append(text)
    elif line.startswith("BENCH-MAPS "):
        _, daemon, text = line.rstrip("\n").split(" ", 2)
        parts = text.split()
        lo, hi = (int(x, 16) for x in parts[0].split("-"))
        name = os.path.basename(parts[5]) if len(parts) > 5 else "[anon]"
        maps.setdefault(daemon, []).append((lo, hi, name))

def mapping(daemon, address):
    for lo, hi, name in maps.get(daemon, []):
        if lo <= address < hi:
            return name
    return "[unmapped then]"

for daemon, lines in timelines.items():
    events = []
    for text in lines:
        m = event_re.match(text)
        if m:
            events.append((float(m.group(3)), int(m.group(2)), m.group(4), m.group(5)))
    start = next((e for e in events if e[2] == "sched_process_exec" and "filename=" in e[3]
                  and daemon in e[3].split("filename=")[1].split()[0]), None)
    if start is None:
        print(f"timeline ({daemon}): no exec in the trace")
        continue
    t0, pids = start[0], {start[1]}
    shown = None
    rows = []   # (ms from exec, pid, text)
    pending, fault_start, fault_kind = {}, {}, {}
    syscall_ms, fault_ms, fault_count, fault_where, off_cpu = {}, 0.0, {"user": 0, "kernel": 0}, {}, 0.0
    off_since = {}
    orders = {}   # page allocator calls by order, exec to first frame
    for at, pid, name, rest in events:
        if at < t0:
            continue
        if pid not in pids and not (name == "sched_switch" and any(f"next_pid={p} " in rest for p in pids)):
            # a child forked by a traced process (event-fork) is traced too
            if name in ("sys_enter", "sys_exit", "page_fault_user", "page_fault_kernel") and daemon != "gauged":
                pids.add(pid)
            else:
                continue
        ms = (at - t0) * 1000
        if shown is not None:
            break
        if name == "sys_enter":
            nr = int(rest.split()[1])
            pending[pid] = (at, SYSCALLS.get(nr, f"syscall{nr}"), rest.split("(", 1)[-1].rstrip(")").split(",")[0])
        elif name == "sys_exit" and pid in pending:
            began, call, arg = pending.pop(pid)
            ret = rest.split("=")[-1].strip()
            took = (at - began) * 1000
            syscall_ms[call] = syscall_ms.get(call, 0.0) + took
            rows.append(((began - t0) * 1000, pid, f"{call}({arg}) = {ret}  {took:.2f} ms"))
        elif name in ("page_fault_user", "page_fault_kernel"):
            kind = name.split("_")[-1]
            fault_count[kind] += 1
            address = int(re.search(r"address=(0x[0-9a-f]+)", rest).group(1), 16)
            fault_kind[pid] = (kind, mapping(daemon, address) if kind == "user" or address < 1 << 47 else "[kernel]")
        elif name == "fault":
            fault_start[pid] = at
        elif name == "fault_done" and pid in fault_start:
            fault_start_at = fault_start.pop(pid)
            took = (at - fault_start_at) * 1000
            fault_ms += took
            where = fault_kind.pop(pid, ("?", "?"))
            rows.append(((fault_start_at - t0) * 1000, pid, f"fault {where[1]} ({where[0]})  {took:.2f} ms"))
            count, total = fault_where.get(where, (0, 0.0))
            fault_where[where] = (count + 1, total + took)
        elif name == "open_path":
            m = re.search(r'path="([^"]*)"', rest)
            rows.append((ms, pid, f"open {m.group(1) if m else rest}"))
        elif name in ("ttm_populate", "ttm_populate_done"):
            rows.append((ms, pid, name))
        elif name == "page_alloc":
            order = int(rest.split("order=")[-1])
            orders[order] = orders.get(order, 0) + 1
        elif name.startswith("drm_") and shown is None:
            shown = ms
            rows.append((ms, pid, f"{name}: first frame on screen"))
        elif name == "sched_switch":
            prev = int(re.search(r"prev_pid=(\d+)", rest).group(1))
            nxt = int(re.search(r"next_pid=(\d+)", rest).group(1))
            if prev in pids:
                off_since[prev] = at
                rows.append((ms, prev, f"off the CPU ({rest.split('prev_state=')[1].split()[0]})"))
            if nxt in pids and nxt in off_since:
                off_cpu += (at - off_since.pop(nxt)) * 1000
                rows.append((ms, nxt, "back on the CPU"))
    out = os.path.join(out_dir, f"timeline-{daemon}.txt")
    with open(out, "w") as f:
        for ms, pid, text in sorted(rows):
            f.write(f"{ms:9.3f} {pid:>5} {text}\n")
    end = shown if shown is not None else (rows[-1][0] if rows else 0)
    in_calls = sum(syscall_ms.values())
    print(f"timeline ({daemon}, one start, traced: slower than untraced): first frame on screen {end:.1f} ms after exec;"
          f" in system calls {in_calls:.1f} ms, off the CPU {off_cpu:.1f} ms, the rest (user space, faults)"
          f" {end - in_calls - off_cpu:.1f} ms;"
          f" page faults {fault_count['user']} user + {fault_count['kernel']} kernel, {fault_ms:.1f} ms in handle_mm_fault"
          f" (full list: {out})")
    top = sorted(syscall_ms.items(), key=lambda kv: -kv[1])[:8]
    print("  system calls: " + ", ".join(f"{k} {v:.1f} ms" for k, v in top))
    if orders:
        print("  page allocator calls by order: " + ", ".join(f"{k}: {v}" for k, v in sorted(orders.items())))
    top = sorted(fault_where.items(), key=lambda kv: -kv[1][1])[:8]
    print("  faults by mapping: " + ", ".join(f"{k[1]} ({k[0]}) {c} / {t:.1f} ms" for k, (c, t) in top))

titles = {"BENCH-PERF": "gauged animating, 10 s", "BENCH-PERF-START": "one start of gauged, exec to quit",
          "BENCH-PERF-PING": "10 gaugectl pings"}
for kind, title in titles.items():
    lines = [text for k, text in perf if k == kind]
    if lines:
        print(f"perf ({title}, cpu-clock samples):")
        for line in lines:
            print("  " + line.rstrip())
