#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""manpages.py - the man pages, generated from what the built gpuctl prints.

gpuctl(1) comes from `gpuctl --help`, gpuctl-CMD(1) from `gpuctl CMD --help`
and each `gpuctl CMD SUB --help` (the same text the binary prints, so a page
cannot drift from --help), with the examples docs/CMD.md shows. gpuctl-agent.conf(5)
comes from the settings tables of docs/agent.md and docs/pool.md, the pages
the agent's configuration parser is documented in.

usage: manpages.py --gpuctl BIN --docs DIR --out DIR [--libexec DIR] [--gzip]
Writes OUT/gpuctl.1, OUT/gpuctl-CMD.1 ... and OUT/gpuctl-agent.conf.5 (.gz with --gzip).
"""
import argparse
import gzip
import os
import re
import subprocess
import sys

DATE = "2026-12-01"
# Paths a command reads or writes on a packaged install (FILES section).
FILES = {
    "*": [("/usr/share/gpuctl/", "the shipped data: GPU catalog, simulated servers (sim/NAME.json), "
           "prices, model presets, XID catalog, health rules")],
    "agent": [("/etc/gpuctl/agent.conf", "settings, see gpuctl-agent.conf(5) (read only when --config names it)"),
              ("/etc/default/gpuctl-agent", "GPUCTL_AGENT_OPTS for the systemd unit"),
              ("/lib/systemd/system/gpuctl-agent.service", "the systemd unit (installed, not enabled)"),
              ("/var/lib/gpuctl/pool", "the job pool's state as root (jobs.db, jobs/ID/); removed on purge"),
              ("/run/gpuctl/pool.sock", "the pool's control socket as root"),
              ("/usr/share/gpuctl/grafana/gpuctl.json", "Grafana dashboard"),
              ("/usr/share/gpuctl/prometheus/alerts.yml", "Prometheus alert rules")],
    "bench": [("LIBEXEC/", "the CUDA kernels module (gpuctl_kernels.so) where the package was built with it")],
    "diag": [("LIBEXEC/", "the CUDA kernels module (gpuctl_kernels.so) where the package was built with it")],
    "slurm": [("/usr/share/gpuctl/slurm/", "prolog, epilog and healthcheck scripts for slurm.conf"),
              ("LIBEXEC/", "the SPANK plugin (gpuctl_spank.so) where the package was built with it")],
}
POOL_CMDS = ("submit", "queue", "cancel", "logs", "wait", "jobs")


def esc(text):
    """roff-escape one line of text."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    if text.startswith((".", "'")):
        text = "\\&" + text
    return text


def run_help(binary, *args):
    r = subprocess.run([binary, *args, "--help"], capture_output=True, text=True, check=False)
    if r.returncode != 0 or not r.stdout:
        sys.exit(f"manpages.py: '{' '.join(['gpuctl', *args, '--help'])}' exited {r.returncode}: {r.stderr.strip()}")
    return r.stdout


OPTION = re.compile(r"^(\s+)(-\S.*)$")
DEFINITION = re.compile(r"^(\s+)(\S+(?: \S+)*?)\s{2,}(\S.*)$")


def split_option(line):
    """'  -i, --id SPEC    only these' -> ('-i, --id SPEC', 'only these')."""
    m = re.match(r"^(\s*)(\S.*?)\s{2,}(\S.*)$", line)
    if m:
        return m.group(2), m.group(3)
    # one space only: the option and its upper-case arguments, then the text
    words = line.split()
    term = []
    while words and (words[0].startswith("-") or re.fullmatch(r"[A-Z][A-Z0-9_:.|=,\[\]-]*\]?", words[0])):
        term.append(words.pop(0))
    return " ".join(term), " ".join(words)


def parse(help_text):
    """Help text -> (usage lines, body lines, exit lines)."""
    lines = help_text.rstrip("\n").split("\n")
    usage, body, exits = [], [], []
    i = 0
    if lines and lines[0].startswith("usage:"):
        while i < len(lines) and lines[i].strip():
            usage.append(re.sub(r"^usage:\s*", "", lines[i]).rstrip())
            i += 1
    section = body
    for line in lines[i:]:
        if re.match(r"^exit( codes)?:", line):
            section = exits
            rest = re.sub(r"^exit( codes)?:\s*", "", line)
            if rest:
                exits.append(rest)
            continue
        section.append(line)
    return usage, body, exits


def synopsis(usage):
    out, cur = [], None
    for u in usage:
        s = u.strip()
        if s.startswith("gpuctl") or cur is None:
            cur = [s]
            out.append(cur)
        else:
            cur.append(s)
    roff = []
    for entry in out:
        words = " ".join(entry).split(" ", 1)
        roff.append(".SY " + esc(words[0]))
        if len(words) > 1:
            roff.append(esc(words[1]))
        roff.append(".YS")
    return roff


def body_roff(body):
    """Paragraphs, headings ('options:'), option and definition lists."""
    roff, in_list, list_indent = [], False, 0
    for line in body:
        if not line.strip():
            roff.append(".PP")
            in_list = False
            continue
        indent = len(line) - len(line.lstrip())
        if in_list and indent > list_indent and not line.lstrip().startswith("-"):
            roff.append(esc(line.strip()))
            continue
        if indent == 0 and line.endswith(":") and len(line) < 40:
            roff.append(".SS " + esc(line[:-1]))
            in_list = False
            continue
        m = OPTION.match(line)
        if m:
            term, text = split_option(line)
            roff += [".TP", "\\fB" + esc(term) + "\\fR"]
            if text:
                roff.append(esc(text))
            in_list, list_indent = True, indent
            continue
        m = DEFINITION.match(line)
        if m and indent <= 4:
            roff += [".TP", "\\fB" + esc(m.group(2)) + "\\fR", esc(m.group(3))]
            in_list, list_indent = True, indent
            continue
        if in_list:
            roff.append(".PP")
            in_list = False
        roff.append(esc(line.strip()))
    while roff and roff[-1] == ".PP":
        roff.pop()
    return roff


def exits_roff(exits):
    roff, rows = [], []
    for line in exits:
        m = DEFINITION.match(line)
        if m and not m.group(2)[0].isdigit():  # "  train   0 planned, 64 ..." (one row per subcommand)
            rows.append([m.group(2), m.group(3)])
        elif rows and rows[-1][0]:
            rows[-1][1] += " " + line.strip()
        elif rows:
            rows[-1][1] += " " + line.strip()
        else:
            rows.append(["", line.strip()])
    for name, text in rows:
        if name:
            roff += [".TP", "\\fB" + esc(name) + "\\fR", esc(text)]
            continue
        for item in re.split(r",\s*(?=\d+(?:/\d+)?\s)", text):
            code = re.match(r"^(\d+(?:/\d+)?)\s+(.*)$", item)
            if code:
                roff += [".TP", "\\fB" + code.group(1) + "\\fR", esc(code.group(2))]
            elif item:
                roff.append(esc(item))
    return roff + [".PP", "All codes: docs/exit\\-codes.md (/usr/share/doc/gpuctl/exit\\-codes.md)."]


def examples(docs, cmd):
    """The '$ gpuctl ... CMD ...' and code-block 'gpuctl ... CMD' lines of the docs."""
    found = []
    paths = [os.path.join(docs, cmd + ".md")] + sorted(
        os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md") and f != cmd + ".md")
    pattern = re.compile(r"^\s*(?:\$ )?(gpuctl(?: --(?:sim|or-sim|data-dir)[ =]\S+)* " + re.escape(cmd) + r"(?: .*)?)$")
    for path in paths:
        if not os.path.exists(path):
            continue
        in_code = False
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.startswith("```"):
                    in_code = not in_code
                    continue
                m = pattern.match(line.rstrip("\n"))
                if m and (in_code or line.lstrip().startswith("$ ")) and "[" not in m.group(1) and m.group(1) not in found:
                    found.append(m.group(1))
        if len(found) >= 8:
            break
    return found[:8]


def header(name, section, title):
    title_name = name.upper().replace("-", "\\-")
    return [f'.TH {title_name} {section} {DATE} "gpuctl {VERSION}" "{title}"']


def files_roff(cmd):
    rows = FILES.get(cmd, []) + (FILES["agent"][3:5] if cmd in POOL_CMDS else []) + FILES["*"]
    roff = [".SH FILES"]
    for path, what in rows:
        roff += [".TP", "\\fI" + esc(path.replace("LIBEXEC", LIBEXEC)) + "\\fR", esc(what)]
    return roff


def command_page(binary, docs, cmd, summary):
    usage, body, exits = parse(run_help(binary, cmd))
    roff = header("gpuctl-" + cmd, 1, "gpuctl manual")
    roff += [".SH NAME", f"gpuctl\\-{esc(cmd)} \\- {esc(summary)}", ".SH SYNOPSIS"] + synopsis(usage)
    roff += [".SH DESCRIPTION"] + body_roff(body)
    subs = []
    for u in usage:
        m = re.match(r"^\s*gpuctl " + re.escape(cmd) + r" ([a-z][a-z-]*)(\s|$)", u)
        if m and m.group(1) not in subs:
            subs.append(m.group(1))
    if subs:
        roff.append(".SH SUBCOMMANDS")
        for sub in subs:
            s_usage, s_body, s_exits = parse(run_help(binary, cmd, sub))
            roff += [".SS " + esc(f"gpuctl {cmd} {sub}")] + synopsis(s_usage) + [".PP"] + body_roff(s_body)
            if s_exits:
                roff += [".PP", "Exit status:"] + exits_roff(s_exits)[:-2]
    roff += [".SH GLOBAL OPTIONS",
             "\\fB\\-\\-sim\\fR \\fINAME\\fR|\\fIFILE\\fR, \\fB\\-\\-or\\-sim\\fR \\fINAME\\fR and "
             "\\fB\\-\\-data\\-dir\\fR \\fIDIR\\fR may stand before or after the command; see \\fBgpuctl\\fR(1)."]
    if exits:
        roff += [".SH EXIT STATUS"] + exits_roff(exits)
    roff += [".SH ENVIRONMENT", ".TP", "\\fBGPUCTL_SIM\\fR", "a simulated server, as \\fB\\-\\-sim\\fR",
             ".TP", "\\fBGPUCTL_DATA_DIR\\fR", "the data files, as \\fB\\-\\-data\\-dir\\fR"]
    if cmd in POOL_CMDS:
        roff += [".TP", "\\fBGPUCTL_POOL_SOCKET\\fR", "the pool's control socket, as \\fB\\-\\-socket\\fR"]
    roff += files_roff(cmd)
    ex = examples(docs, cmd)
    if ex:
        roff += [".SH EXAMPLES", ".EX"] + [esc(e) for e in ex] + [".EE"]
    see = ["\\fBgpuctl\\fR(1)"] + (["\\fBgpuctl\\-agent.conf\\fR(5)"] if cmd == "agent" else [])
    roff += [".SH SEE ALSO", ", ".join(see) + ";",
             f"/usr/share/doc/gpuctl/{esc(cmd)}.md" if os.path.exists(os.path.join(docs, cmd + ".md"))
             else "/usr/share/doc/gpuctl/"]
    return roff


def main_page(binary, commands):
    usage, body, exits = parse(run_help(binary))
    roff = header("gpuctl", 1, "gpuctl manual")
    roff += [".SH NAME", "gpuctl \\- GPU server toolkit: inventory, monitoring, health, benchmarks, planning, job pool",
             ".SH SYNOPSIS"] + synopsis(usage) + [".SH DESCRIPTION"] + body_roff(body)
    roff += [".PP", "Each command has its page: " + ", ".join(f"\\fBgpuctl\\-{esc(c)}\\fR(1)" for c, _ in commands) + "."]
    if exits:
        roff += [".SH EXIT STATUS"] + exits_roff(exits)
    roff += files_roff("agent")
    roff += [".SH EXAMPLES", ".EX", "gpuctl \\-\\-sim h200x8 report", "gpuctl info", "gpuctl help plan train", ".EE",
             ".SH SEE ALSO", "\\fBgpuctl\\-agent.conf\\fR(5); /usr/share/doc/gpuctl/"]
    return roff


def table_rows(path, first_key=None):
    """The rows of the first markdown table in PATH (after the line first_key starts)."""
    rows, started = [], first_key is None
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not started:
                started = line.startswith(first_key)
                continue
            if line.startswith("|"):
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                if not set("".join(cells)) <= set("-: "):
                    rows.append(cells)
            elif rows:
                break
    return rows[1:]  # without the head row


def md(text):
    """Inline markdown -> roff: `code` bold."""
    return re.sub(r"`([^`]*)`", lambda m: "\\fB" + m.group(1) + "\\fR", esc(text))


def agent_conf_page(docs):
    agent_md = os.path.join(docs, "agent.md")
    intro = []
    with open(agent_md, encoding="utf-8") as f:
        lines = f.read().split("\n")
    start = lines.index("## Configuration") + 1
    for line in lines[start:]:
        if line.startswith(("```", "|")):
            break
        intro.append(line)
    roff = header("gpuctl-agent.conf", 5, "gpuctl manual")
    roff += [".SH NAME", "gpuctl\\-agent.conf \\- settings of the gpuctl agent and its job pool",
             ".SH SYNOPSIS", "/etc/gpuctl/agent.conf (any path, named by \\fBgpuctl agent \\-\\-config\\fR \\fIFILE\\fR)",
             ".SH DESCRIPTION"]
    roff += [md(x) if x.strip() else ".PP" for x in intro]
    roff.append(".SH SETTINGS")
    for key, flag, default, meaning in table_rows(agent_md, "## Configuration"):
        roff += [".TP", md(key) + (f" ({md(flag)})" if flag else ""), md(meaning) + f" Default: {md(default)}."]
    roff.append(".SH POOL SETTINGS")
    for key, meaning, default in table_rows(os.path.join(docs, "pool.md")):
        roff += [".TP", md(key), md(meaning) + f" Default: {md(default)}."]
    roff += [".SH EXAMPLES", ".EX", "# /etc/gpuctl/agent.conf", "listen = :9477", "interval = 1s",
             "metrics = all", "label.datacenter = eu\\-west", "pool = on", ".EE",
             ".SH EXIT STATUS", "A malformed file makes \\fBgpuctl agent\\fR exit 65, an unreadable one 66.",
             ".SH FILES", ".TP", "\\fI/etc/gpuctl/agent.conf\\fR", "the usual place (not created by the package)",
             ".TP", "\\fI/etc/default/gpuctl\\-agent\\fR", "GPUCTL_AGENT_OPTS=\"\\-\\-config /etc/gpuctl/agent.conf\" for the systemd unit",
             ".SH SEE ALSO", "\\fBgpuctl\\-agent\\fR(1); /usr/share/doc/gpuctl/agent.md, pool.md"]
    return roff


def write(out, name, roff, compress):
    text = "\n".join(roff) + "\n"
    path = os.path.join(out, name)
    if compress:  # mtime 0: the same page gives the same bytes (reproducible package)
        with open(path + ".gz", "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0,
                                                             compresslevel=9) as f:
            f.write(text.encode())
    else:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


VERSION = "0"
LIBEXEC = "/usr/lib/gpuctl"


def main():
    global VERSION, LIBEXEC
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpuctl", required=True)
    ap.add_argument("--docs", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--gzip", action="store_true")
    ap.add_argument("--libexec", default=LIBEXEC, help="where the kernels module and SPANK plugin are installed")
    a = ap.parse_args()
    LIBEXEC = a.libexec
    r = subprocess.run([a.gpuctl, "--version"], capture_output=True, text=True, check=True)
    VERSION = r.stdout.split()[1]
    top = run_help(a.gpuctl)
    commands = re.findall(r"^  ([a-z]+) +(\S.*)$", top.split("\ncommands:\n", 1)[1].split("\n\n", 1)[0], re.M)
    if not commands:
        sys.exit("manpages.py: no commands in 'gpuctl --help'")
    os.makedirs(a.out, exist_ok=True)
    write(a.out, "gpuctl.1", main_page(a.gpuctl, commands), a.gzip)
    for cmd, summary in commands:
        write(a.out, f"gpuctl-{cmd}.1", command_page(a.gpuctl, a.docs, cmd, summary), a.gzip)
    write(a.out, "gpuctl-agent.conf.5", agent_conf_page(a.docs), a.gzip)


if __name__ == "__main__":
    main()
