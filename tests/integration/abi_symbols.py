#!/usr/bin/env python3
"""The drop-in libibverbs.so.1 against Debian's: the same symbols with the same versions.

Usage: abi_symbols.py <drop-in libibverbs.so.1> <Debian's libibverbs.so.1> <doc/verbs.md>

Each exported symbol is read as readelf prints it, name@VERSION (a non-default version) or
name@@VERSION (the default). Every symbol version Debian's library exports must be exported by
the drop-in, or be listed with its reason in doc/verbs.md's table; the drop-in must export
nothing Debian's does not, and nothing the table says it lacks.
"""
import re
import shutil
import subprocess
import sys


def exported(lib):
    """The defined dynamic symbols of @lib with their versions, version nodes left out."""
    out = subprocess.run(['readelf', '--dyn-syms', '--wide', lib], check=True,
                         capture_output=True, text=True).stdout
    syms = set()
    for line in out.splitlines():
        f = line.split()
        if len(f) < 8 or not f[0].rstrip(':').isdigit() or f[6] == 'UND':
            continue
        name = f[7]
        if '@' not in name:
            continue  # unversioned: the version script exports nothing so
        base, _, version = name.partition('@')
        if base == version.lstrip('@'):
            continue  # the version node itself (IBVERBS_1.0@@IBVERBS_1.0)
        if version.lstrip('@').startswith('DROCE_PRIVATE'):
            continue  # droce's own, between its drop-in libraries
        syms.add(name)
    return syms


def documented_missing(doc):
    """The table rows of doc/verbs.md naming a symbol version the drop-in lacks."""
    rows = re.findall(r'^\| `([A-Za-z_0-9]+@@?[A-Z_0-9.]+)` \| (.+?) \|$', open(doc).read(),
                      re.MULTILINE)
    return {sym for sym, reason in rows if reason.strip()}


def main():
    dropin, debian, doc = sys.argv[1:4]
    if shutil.which('readelf') is None:
        print('readelf is not installed (binutils)')
        return 77
    try:
        theirs = exported(debian)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f'{debian}: {e} (libibverbs1 is not installed)')
        return 77
    ours = exported(dropin)
    listed = documented_missing(doc)
    failures = []
    by_name = {}
    for s in theirs:
        by_name.setdefault(re.split('@@?', s)[0], set()).add(s)
    for s in sorted(ours - theirs):
        name = re.split('@@?', s)[0]
        if name in by_name:
            failures.append(f'{s}: Debian exports it as {", ".join(sorted(by_name[name]))}')
        else:
            failures.append(f'{s}: Debian\'s libibverbs does not export it')
    for s in sorted(theirs - ours - listed):
        failures.append(f'{s}: missing from the drop-in and not listed in {doc}')
    for s in sorted(listed & ours):
        failures.append(f'{s}: exported, yet {doc} lists it as missing')
    for s in sorted(listed - theirs):
        failures.append(f'{s}: listed in {doc}, but Debian\'s library does not export it')
    common = len(ours & theirs)
    print(f'{common} symbol versions in common, {len(theirs - ours)} missing '
          f'(all listed: {not (theirs - ours - listed)})')
    for f in failures:
        print('FAIL', f)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
