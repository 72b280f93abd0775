#!/usr/bin/env bash
# steps_run.sh TIMING_FILE STEPS: exit 0 when the case of the timing file
# ran STEPS steps (its "steps"); else one line that says how many it ran,
# and exit 1.
# A run continued from the restart of step S to run.steps = N runs N - S
# steps. A run that ignored the restart and ran from step 0 would end with
# the straight run's bits too, so comparing bits alone cannot tell that a
# run continued; this can.
file="$1"; want="$2"
ran=$(sed -n 's/^  "steps": \([0-9]*\),$/\1/p' "$file" 2>/dev/null)
[ "$ran" = "$want" ] && exit 0
echo "$file: the case ran ${ran:-no (no timing file, or no \"steps\" in it)} steps, expected $want"
exit 1
