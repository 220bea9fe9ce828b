#!/usr/bin/env bash
# Check (default) or --fix the C sources against .clang-format.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files -co --exclude-standard '*.c' '*.h' 2>/dev/null ||
	find lib app include tests -name '*.[ch]')
if [ "${1:-}" = --fix ]; then
	exec clang-format -i --style=file "${files[@]}"
fi
clang-format --dry-run --Werror --style=file "${files[@]}"
echo "format: ${#files[@]} files match .clang-format"
