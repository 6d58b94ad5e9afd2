#!/usr/bin/env python3
"""The import map of `src`: which file uses which, and every loop.

A file uses another when it names an item defined there: through `crate::`,
`super::`, `self::` or a child module's name, in a `use` or inline. A name
reached through a re-export (`pub use error::Error;` in a `mod.rs`) is a use
of the file that defines it; the re-export itself and a module declaration
(`mod x;`) are the parent's interface, not uses; a file's unit tests
(from its `#[cfg(test)]` on) are left out.

Prints every strongly connected set of files larger than `--max` (default 2)
and exits 1 if there is one, so "no loop longer than two files" is checked.

    python3 scripts/import_map.py [--max 2] [--edges] [--depth N]

`--depth N` folds files into their first N path segments (`--depth 1`: the
top-level modules) before looking for loops of more than one module.
"""
import os
import re
import sys
from collections import defaultdict

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))
IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def module_of(path):
    rel = os.path.relpath(path, ROOT)[:-3].split(os.sep)
    if rel[-1] in ("mod", "lib"):
        rel = rel[:-1]
    return tuple(rel)


def strip(src):
    src = re.sub(r"//[^\n]*", "", src)
    src = re.sub(r"/\*.*?\*/", "", src, flags=re.S)
    src = re.sub(r"pub\(in [^)]*\)", "pub", src)  # a visibility, not a use
    return re.sub(r'"(?:\\.|[^"\\])*"', '""', src)


def flatten(prefix, body):
    """`a::{b, c::{d}}` as [[a, b], [a, c, d]] (body is what follows `a::`)."""
    body = body.strip()
    if "{" in body and not body.startswith("{"):
        head, rest = body.split("{", 1)
        return flatten(prefix + [s for s in head.strip().split("::") if s], "{" + rest)
    if not body.startswith("{"):
        segs = body.split(" as ")[0].strip().split("::")
        alias = body.split(" as ")[1].strip() if " as " in body else segs[-1]
        return [(prefix + [s.strip() for s in segs if s.strip()], alias)]
    out, depth, cur = [], 0, ""
    for c in body[1:-1] + ",":
        depth += c == "{"
        depth -= c == "}"
        if c == "," and depth == 0:
            cur = cur.strip()
            if cur:
                if "{" in cur:
                    head, rest = cur.split("{", 1)
                    head = [s for s in head.strip().split("::") if s]
                    out += flatten(prefix + head, "{" + rest)
                else:
                    out += flatten(prefix, cur)
            cur = ""
        else:
            cur += c
    return out


USE = re.compile(r"\b(pub(?:\([^)]*\))?\s+)?use\s+([^;]+);")


class Crate:
    def __init__(self):
        self.files, self.src, self.reexports, self.uses = {}, {}, {}, {}
        for d, _, fs in os.walk(ROOT):
            for f in fs:
                if f.endswith(".rs") and f != "main.rs":
                    p = os.path.join(d, f)
                    self.files[module_of(p)] = p
        for m, p in self.files.items():
            src = strip(open(p, encoding="utf-8").read())
            # Unit tests sit at the end of their file and reach into it
            # (`use super::*`); they are not part of the design.
            src = src.split("#[cfg(test)]")[0]
            self.src[m] = src
            self.reexports[m], self.uses[m] = {}, []
            for u in USE.finditer(src):
                for segs, alias in flatten([], u.group(2)):
                    if u.group(1):
                        self.reexports[m][alias] = segs
                    else:
                        self.uses[m].append(segs)

    def children(self, m):
        return {k[-1] for k in self.files if len(k) == len(m) + 1 and k[: len(m)] == m}

    def resolve(self, here, segs, seen=0):
        """The file defining what `segs`, written in `here`, names."""
        if not segs or seen > 8:
            return None
        head, rest = segs[0], segs[1:]
        if head == "crate":
            base = ()
        elif head == "super":
            base = here[:-1]
            while rest and rest[0] == "super":
                base, rest = base[:-1], rest[1:]
        elif head == "self":
            base = here
        elif head in self.children(here):
            base, rest = here + (head,), rest
        else:
            return None
        m = base
        for i, s in enumerate(rest):
            if m + (s,) in self.files:
                m = m + (s,)
                continue
            target = self.reexports.get(m, {}).get(s)
            if target is not None:
                deeper = self.resolve(m, target + rest[i + 1 :], seen + 1)
                return deeper or m
            return m
        return m

    def edges(self):
        out = defaultdict(set)
        for m, src in self.src.items():
            paths = list(self.uses[m])
            for x in re.finditer(r"(?<![A-Za-z0-9_:])((?:crate|super|self)(?:::" + IDENT + ")+)", src):
                if not src.startswith("::{", x.end()):  # a `use` group's prefix, read above
                    paths.append(x.group(1).split("::"))
            for name in self.children(m):
                for x in re.finditer(r"(?<![A-Za-z0-9_:])(" + name + r"(?:::" + IDENT + ")+)", src):
                    start = src.rfind("\n", 0, x.start())
                    if re.match(r"\s*pub(\([^)]*\))?\s+use\b", src[start + 1 : x.start()]):
                        continue
                    paths.append(x.group(1).split("::"))
            for segs in paths:
                t = self.resolve(m, segs)
                if t is not None and t != m:
                    out[m].add(t)
        return out


def sccs(nodes, edges):
    index, low, stack, on, found, n = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(100000)

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            found.append(comp)

    for v in nodes:
        if v not in index:
            visit(v)
    return found


def main():
    args = sys.argv[1:]
    limit = int(args[args.index("--max") + 1]) if "--max" in args else 2
    depth = int(args[args.index("--depth") + 1]) if "--depth" in args else None
    crate = Crate()
    edges = crate.edges()
    name = lambda m: "/".join(m) or "crate"
    if depth is not None:
        folded = defaultdict(set)
        for a, bs in edges.items():
            for b in bs:
                if a[:depth] != b[:depth] and a[:depth] and b[:depth]:
                    folded[a[:depth]].add(b[:depth])
        nodes = {m[:depth] for m in crate.files if m[:depth]}
        edges, limit = folded, 1
    else:
        nodes = set(crate.files)
    if "--edges" in args:
        for a in sorted(edges):
            for b in sorted(edges[a]):
                print(name(a), "->", name(b))
    bad = [c for c in sccs(sorted(nodes), edges) if len(c) > limit]
    for c in sorted(bad, key=len, reverse=True):
        print(f"loop of {len(c)}:", " ".join(sorted(name(x) for x in c)))
    print(f"{len(nodes)} modules, {sum(len(v) for v in edges.values())} uses, {len(bad)} loops over {limit}")
    sys.exit(1 if bad else 0)


main()
