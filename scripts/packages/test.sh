#!/bin/sh
# `npm test` after the build: the examples against the packed packages
# (scripts/packages/test-examples.ts), then the root's jest with the
# arguments npm passes on (CI's `--ci --json --outputFile=…`). Both always
# run, so one failing hides nothing of the other; the exit status is 1 if
# either failed. The examples go first: .ci/run takes jest's results file,
# once written, as the sign that the run is ending.
npx tsx scripts/packages/test-examples.ts
examples=$?
npx jest "$@"
root=$?
[ "$examples" -eq 0 ] && [ "$root" -eq 0 ]
