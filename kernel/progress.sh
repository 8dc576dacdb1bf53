# SPDX-License-Identifier: GPL-2.0
# Sourced by kernel/build.sh (and tests/host/test_build_progress.py).
#
# run_progress LABEL LOG CMD...: run CMD with its output in LOG, printing
# every PROGRESS_EVERY seconds (20) how long it has run and, for make, how
# many objects it has compiled so far.  With PROGRESS_TOTAL set (a build
# from scratch, where the count is known from the last one), it says "of
# about TOTAL" and the time left at the rate so far: objects do not all
# take as long, so it is an estimate, and says so.  An incremental build
# compiles anything from 3 objects to all of them, so it gets no total.
run_progress() {
	local label=$1 log=$2 pid n last t0 every=${PROGRESS_EVERY:-20} next
	local total=${PROGRESS_TOTAL:-} count
	shift 2
	next=$every
	"$@" >"$log" 2>&1 &
	pid=$!
	# A stopped build.sh (Ctrl-C, timeout) must not leave make running.
	trap 'kill $pid 2>/dev/null' EXIT
	t0=$(date +%s)
	while kill -0 "$pid" 2>/dev/null; do
		sleep 1
		if [ $(($(date +%s) - t0)) -ge "$next" ]; then
			n=$(grep -cE '^  (CC|AS) ' "$log" || true)
			last=$(grep '^  [A-Z]' "$log" | tail -1 | awk '{print $2}' || true)
			count="$n objects compiled"
			if [ -n "$total" ] && [ "$n" -gt 0 ]; then
				count="$n of about $total objects compiled, $(time_left "$next" "$n" "$total")"
			fi
			echo "kernel: $label: $((next))s${last:+, $count, now at ${last#"$obj"/}}"
			next=$((next + every))
		fi
	done
	trap - EXIT
	wait "$pid"
}

# time_left ELAPSED DONE TOTAL: the rest at the rate so far, in words.
time_left() {
	local s
	if [ "$2" -ge "$3" ]; then
		echo "linking"
		return
	fi
	s=$(($1 * ($3 - $2) / $2))
	if [ "$s" -ge 90 ]; then
		echo "about $(((s + 30) / 60)) min left at this rate"
	else
		echo "about ${s}s left at this rate"
	fi
}
