#!/usr/bin/env python3
"""The layer rules of doc/architecture.md, checked on the sources.

    check-layers.py --component NAME --stamp FILE   one component (the build runs this)
    check-layers.py --build DIR                     every rule over the tree (the style suite)

Rules:
- a component's files (its folder and every folder under it) include only its own headers,
  include/'s public ones, and the droce_*.h headers of the components its meson.build lists
  in `deps`, each of which comes before it in lib/meson.build's `components`; "quoted" and
  <angle-bracket> includes alike, since the build's include path finds both;
- a header that is not a droce_*.h one (verbs_priv.h, verbs_limits.h ...) is private to its
  component: no other includes it;
- rte_ethdev.h and the rte_eth_* API appear in lib/port only, and so do DPDK driver names
  ("net_memif" ...) in lib/;
- the headers meson installs are exactly the public API: include/'s headers and what they
  include, transitively (--build only).
Prints each breach and exits 1 if there is one.
"""
import argparse
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)
SYSTEM_INCLUDE_RE = re.compile(r'^\s*#\s*include\s+<([^>]+)>', re.MULTILINE)
STRING_LIST_RE = r"\[([^\]]*)\]"


def strings(text):
    return re.findall(r"'([^']*)'", text)


def components():
    """lib/meson.build's components, in dependency order, then lib/dropin (built last)."""
    text = open(os.path.join(ROOT, 'lib', 'meson.build')).read()
    m = re.search(r'^components = ' + STRING_LIST_RE, text, re.MULTILINE)
    return strings(re.sub(r'#.*', '', m.group(1))) + ['dropin']


def declared_deps(name):
    """The component names a component's meson.build lists in `deps = [...]`."""
    text = open(os.path.join(ROOT, 'lib', name, 'meson.build')).read()
    m = re.search(r'^deps = ' + STRING_LIST_RE, text, re.MULTILINE)
    return strings(m.group(1)) if m else []


def files_of(folder, exts=('.c', '.h')):
    """The files of @folder and of every folder under it, relative to the tree's root."""
    found = []
    for dirpath, _, names in os.walk(os.path.join(ROOT, folder)):
        rel = os.path.relpath(dirpath, ROOT)
        found += [os.path.join(rel, n) for n in names if n.endswith(exts)]
    return sorted(found)


def included(text, owners):
    """The headers @text includes that the tree has: every "quoted" one; an <angled> one
    when it names a header of the tree without a folder (<droce_wire.h>, <verbs_priv.h>) or
    is a droce_*.h one in a folder (<droce/droce_x.h>); <infiniband/verbs.h> and the system's
    others are not droce's."""
    names = INCLUDE_RE.findall(text)
    for inc in SYSTEM_INCLUDE_RE.findall(text):
        base = os.path.basename(inc)
        if ('/' not in inc and base in owners) or base.startswith('droce_'):
            names.append(inc)
    return names


def header_owners(names):
    """Header file name -> the component whose folder holds it ('include' for the public)."""
    owners = {os.path.basename(h): 'include' for h in files_of('include', ('.h',))}
    for name in names:
        for h in files_of(os.path.join('lib', name), ('.h',)):
            owners[os.path.basename(h)] = name
    return owners


def check_component(name, order, owners):
    breaches = []
    deps = declared_deps(name)
    for d in deps:
        if d not in order or order.index(d) >= order.index(name):
            breaches.append(f'lib/{name}/meson.build: deps names {d!r}, which is not a '
                            f'component before {name!r} in lib/meson.build')
    for f in files_of(os.path.join('lib', name)):
        text = open(os.path.join(ROOT, f)).read()
        for inc in included(text, owners):
            owner = owners.get(os.path.basename(inc))
            if owner is None or owner in ('include', name):
                continue
            if not inc.startswith('droce_'):
                breaches.append(f'{f}: includes {inc}, a header private to lib/{owner}')
            elif owner not in deps:
                breaches.append(f'{f}: includes {inc} of lib/{owner}, which '
                                f'lib/{name}/meson.build does not list in deps')
    return breaches


def check_ethdev():
    breaches = []
    for top in ('lib', 'app', 'tests'):
        for dirpath, _, names in os.walk(os.path.join(ROOT, top)):
            rel = os.path.relpath(dirpath, ROOT)
            if rel == os.path.join('lib', 'port') or rel.startswith(os.path.join('lib', 'port') + os.sep):
                continue
            for n in names:
                if not n.endswith(('.c', '.h')):
                    continue
                text = open(os.path.join(dirpath, n)).read()
                code = re.sub(r'/\*.*?\*/|//[^\n]*', '', text, flags=re.DOTALL)
                if 'rte_ethdev.h' in SYSTEM_INCLUDE_RE.findall(code) or re.search(r'\brte_eth_', code):
                    breaches.append(f'{os.path.join(rel, n)}: uses ethdev (rte_eth_*), which only '
                                    'lib/port may')
                if top == 'lib' and re.search(r'"net_[a-z]', code):
                    breaches.append(f'{os.path.join(rel, n)}: names a DPDK driver, which only '
                                    'lib/port may (ask the port: droce_port.h)')
    return breaches


def public_headers(owners):
    """include/'s headers and every droce header they include, transitively."""
    paths = {os.path.basename(h): h for h in files_of('include', ('.h',))}
    for dirpath, _, names in os.walk(os.path.join(ROOT, 'lib')):
        for n in names:
            if n.endswith('.h') and n in owners and owners[n] != 'include':
                paths[n] = os.path.relpath(os.path.join(dirpath, n), ROOT)
    pending = [os.path.basename(h) for h in files_of('include', ('.h',))]
    seen = set()
    while pending:
        h = pending.pop()
        if h in seen or h not in paths:
            continue
        seen.add(h)
        pending += included(open(os.path.join(ROOT, paths[h])).read(), owners)
    return seen


def check_installed(build, owners):
    out = subprocess.run(['meson', 'introspect', '--installed', build], check=True,
                         capture_output=True, text=True).stdout
    installed = {os.path.basename(dest) for dest in json.loads(out).values()
                 if dest.endswith('.h')}
    public = public_headers(owners)
    breaches = [f'{h}: installed, yet no public header includes it (private to '
                f'lib/{owners.get(h, "?")})' for h in sorted(installed - public)]
    breaches += [f'{h}: a public header includes it, yet it is not installed'
                 for h in sorted(public - installed)]
    return breaches


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--component')
    ap.add_argument('--stamp')
    ap.add_argument('--build')
    args = ap.parse_args()
    order = components()
    owners = header_owners(order)
    if args.component:
        breaches = check_component(args.component, order, owners)
    else:
        breaches = [b for name in order for b in check_component(name, order, owners)]
        breaches += check_ethdev()
        if args.build:
            breaches += check_installed(args.build, owners)
    for b in breaches:
        print('layers:', b, file=sys.stderr)
    if breaches:
        return 1
    if args.stamp:
        with open(args.stamp, 'w') as f:
            f.write('/* lib/%s keeps to its declared deps (tools/check-layers.py) */\n'
                    % args.component)
    return 0


if __name__ == '__main__':
    sys.exit(main())
