#!/usr/bin/python3
"""tools/check-layers.py on small trees made for each rule: what it must refuse and what it
must let through, "quoted" and <angle-bracket> includes alike, in a component's subfolders
too.

    test_check_layers.py CHECK_SCRIPT

One TAP-style line per check; exit status 0 when every check passes, 1 when one fails.
"""
import os
import shutil
import subprocess
import sys
import tempfile

checks = []


def check(ok, what):
    checks.append(bool(ok))
    print(f"{'ok' if ok else 'not ok'} {len(checks)} - {what}", flush=True)


def write(root, path, text):
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, 'w') as f:
        f.write(text)


def tree(script, source, where='lib/top/sub/user.c'):
    """A tree of two components, `base` then `top` (top has no deps), and lib/dropin, with
    @source as @where; the checker's verdict on `top` (exit status, stderr)."""
    root = tempfile.mkdtemp(prefix='check-layers-')
    try:
        os.makedirs(os.path.join(root, 'tools'))
        shutil.copy(script, os.path.join(root, 'tools', 'check-layers.py'))
        write(root, 'lib/meson.build', "components = ['base', 'top']\n")
        write(root, 'lib/base/meson.build', 'deps = []\n')
        write(root, 'lib/base/droce_base.h', '/* base */\n')
        write(root, 'lib/base/base_priv.h', '/* private */\n')
        write(root, 'lib/top/meson.build', 'deps = []\n')
        write(root, 'lib/top/droce_top.h', '/* top */\n')
        write(root, 'lib/dropin/meson.build', "deps = ['top']\n")
        write(root, 'include/droce.h', '/* public */\n')
        write(root, where, source)
        r = subprocess.run([sys.executable, os.path.join(root, 'tools', 'check-layers.py'),
                            '--component', 'top'], capture_output=True, text=True)
        return r.returncode, r.stderr
    finally:
        shutil.rmtree(root)


def main():
    script = sys.argv[1]
    ok_source = ('#include <errno.h>\n#include <infiniband/verbs.h>\n#include "droce_top.h"\n'
                 '#include <droce_top.h>\n#include <droce.h>\n')
    rc, err = tree(script, ok_source)
    check(rc == 0, f'its own headers, public ones and system ones pass ({err.strip()})')
    for where in ('lib/top/user.c', 'lib/top/sub/user.c'):
        for inc in ('"droce_base.h"', '<droce_base.h>'):
            rc, err = tree(script, f'#include {inc}\n', where)
            check(rc == 1 and 'does not list in deps' in err,
                  f'{where}: {inc} of an undeclared component fails ({err.strip()})')
        for inc in ('"base_priv.h"', '<base_priv.h>'):
            rc, err = tree(script, f'#include {inc}\n', where)
            check(rc == 1 and 'private to lib/base' in err,
                  f'{where}: {inc}, private to another component, fails ({err.strip()})')
    return 0 if all(checks) else 1


if __name__ == '__main__':
    sys.exit(main())
