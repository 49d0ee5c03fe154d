#!/bin/sh
# make mutate: applies each one-line mutant of tests/mutate/mutants.txt to a copy of the tree,
# rebuilds only what its tests need, runs just those tests, and counts the mutant killed when
# one of them fails. Prints "killed N of M" last and writes the report to $OUT (default
# build/mutate/score.txt). Exit status 0 only when every mutant was killed.
#
# The tree mutated is a copy under build/mutate/tree (files copied only where they changed, so
# its build stays incremental): MUTATE_REV=HEAD (the default) takes the committed tree
# (git archive), MUTATE_REV=worktree the working tree as it is (tracked and untracked files
# git does not ignore). The shared working tree is never written to, so others editing it are
# not disturbed, and an interrupted run leaves nothing mutated behind: the mutated file is put
# back from its saved copy on exit, INT or TERM.
#
# A mutant whose line no longer matches exactly once, or whose build fails, is an error, never
# counted killed. Before any mutant, the unmutated tree must pass every test the list names.
#
# Environment: MUTANTS (list file), MUTATE_REV, MUTATE_ONLY (run the mutants whose id holds
# this text), MUTATE_TIMEOUT (seconds a test may run, default 300), JOBS (make -j, default 2).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MUTANTS=${MUTANTS:-$ROOT/tests/mutate/mutants.txt}
REV=${MUTATE_REV:-HEAD}
ONLY=${MUTATE_ONLY:-}
TMO=${MUTATE_TIMEOUT:-300}
JOBS=${JOBS:-2}
WORK=$ROOT/build/mutate
TREE=$WORK/tree
OUT=${OUT:-$WORK/score.txt}
SAVED=$WORK/saved
mkdir -p "$WORK"

# ---- the copy of the tree ----
NEW=$WORK/new
rm -rf "$NEW"
mkdir -p "$NEW" "$TREE"
if [ "$REV" = worktree ]; then
	(cd "$ROOT" && git ls-files -co --exclude-standard -z | xargs -0 tar cf - 2>/dev/null) |
		tar xf - -C "$NEW" || { echo "mutate: cannot copy the working tree"; exit 2; }
	desc="working tree on $(git -C "$ROOT" rev-parse --short HEAD)"
else
	git -C "$ROOT" archive "$REV" | tar xf - -C "$NEW" || { echo "mutate: no revision $REV"; exit 2; }
	desc="$(git -C "$ROOT" rev-parse --short "$REV")"
fi
(cd "$NEW" && find . -type f) | while read -r f; do
	if ! cmp -s "$NEW/$f" "$TREE/$f"; then
		mkdir -p "$(dirname "$TREE/$f")"
		cp "$NEW/$f" "$TREE/$f"
	fi
done
rm -rf "$NEW"

# ---- restoring a mutated file, always ----
CUR=""
restore() {
	if [ -n "$CUR" ] && [ -f "$SAVED" ]; then
		cp "$SAVED" "$TREE/$CUR"
		CUR=""
	fi
}
trap 'restore' EXIT
trap 'restore; exit 130' INT
trap 'restore; exit 143' TERM

# ---- building and running a mutant's tests (names relative to the tree: a cmocka binary
# tests/x/test_y under BUILD, with :PATTERN to run only its tests matching it (TEST_FILTER), or
# a script tests/x/test_y.sh) ----
targets_of() {
	t=""
	for x in $1; do
		case $x in
		*.sh) t="$t all" ;;
		*) t="$t build/${x%%:*}" ;;
		esac
	done
	echo "$t"
}

build() { # targets...
	(cd "$TREE" && make -j"$JOBS" BUILD=build "$@") < /dev/null > "$WORK/build.log" 2>&1
}

CACHE=$(mktemp -d /tmp/fftbloom-mutate-cache-XXXXXX)
# run_tests TESTS: 0 when every test passed; the first failing test's name in $FAILED_BY
run_tests() {
	FAILED_BY=""
	for x in $1; do
		filter=""
		case $x in
		*.sh) cmd="sh $x" ;;
		*:*) cmd="build/${x%%:*}"; filter=${x#*:} ;;
		*) cmd="build/$x" ;;
		esac
		if ! (cd "$TREE" && XDG_CACHE_HOME=$CACHE BUILD=build CMOCKA_MESSAGE_OUTPUT=stdout \
		      TEST_FILTER=$filter \
		      timeout "$TMO" $cmd) < /dev/null > "$WORK/test.log" 2>&1; then
			FAILED_BY=$x
			return 1
		fi
	done
	return 0
}

# The list: "id @@ file @@ text of one line @@ its replacement @@ tests"; # and blank lines skip.
field() { # line n
	printf '%s\n' "$1" | awk -v n="$2" 'BEGIN { FS = " @@ " } { s = $n; gsub(/^[ \t]+|[ \t]+$/, "", s); print s }'
}

LIST=$WORK/list
grep -v '^[[:space:]]*#' "$MUTANTS" | grep -v '^[[:space:]]*$' > "$LIST"
if [ -n "$ONLY" ]; then
	awk -v o="$ONLY" 'BEGIN { FS = " @@ " } index($1, o)' "$LIST" > "$LIST.only"
	mv "$LIST.only" "$LIST"
fi

# ---- baseline: the unmutated tree passes every test named ----
all_tests=$(while IFS= read -r l; do field "$l" 5; done < "$LIST" | tr ' ' '\n' | sort -u | tr '\n' ' ')
echo "mutate: $desc; tests: $all_tests"
if ! build $(targets_of "$all_tests"); then
	tail -30 "$WORK/build.log"
	echo "mutate: the unmutated tree does not build"
	exit 2
fi
if ! run_tests "$all_tests"; then
	tail -30 "$WORK/test.log"
	echo "mutate: the unmutated tree fails $FAILED_BY: no mutant can be judged"
	exit 2
fi

# ---- each mutant ----
total=0; killed=0; errors=0
REPORT=$WORK/report
: > "$REPORT"
while IFS= read -r l; do
	id=$(field "$l" 1); file=$(field "$l" 2); old=$(field "$l" 3); new=$(field "$l" 4)
	tests=$(field "$l" 5)
	total=$((total + 1))
	if [ ! -f "$TREE/$file" ]; then
		echo "ERROR    $id: no file $file" | tee -a "$REPORT"
		errors=$((errors + 1))
		continue
	fi
	n=$(OLD=$old awk 'index($0, ENVIRON["OLD"]) { c++ } END { print c + 0 }' "$TREE/$file")
	if [ "$n" -ne 1 ]; then
		echo "ERROR    $id: '$old' matches $n lines of $file, not 1 (the code moved on: update the list)" | tee -a "$REPORT"
		errors=$((errors + 1))
		continue
	fi
	cp "$TREE/$file" "$SAVED"
	CUR=$file
	OLD=$old NEW=$new awk '{
		i = index($0, ENVIRON["OLD"])
		if (i) $0 = substr($0, 1, i - 1) ENVIRON["NEW"] substr($0, i + length(ENVIRON["OLD"]))
		print }' "$SAVED" > "$TREE/$file"
	t0=$(date +%s)
	if ! build $(targets_of "$tests"); then
		echo "ERROR    $id: the mutant does not build ($(grep -m1 'error' "$WORK/build.log"))" | tee -a "$REPORT"
		errors=$((errors + 1))
	elif run_tests "$tests"; then
		echo "SURVIVED $id: $file: '$old' -> '$new' passes $tests ($(($(date +%s) - t0)) s)" | tee -a "$REPORT"
	else
		echo "killed   $id by $FAILED_BY ($(($(date +%s) - t0)) s)" | tee -a "$REPORT"
		killed=$((killed + 1))
	fi
	restore
done < "$LIST"
rm -rf "$CACHE"
# the tree's build back to the unmutated sources
build $(targets_of "$all_tests") || true

{
	echo "mutate: $desc, $(date -u +%Y-%m-%dT%H:%MZ), MUTANTS=${MUTANTS#$ROOT/}${ONLY:+ MUTATE_ONLY=$ONLY}"
	cat "$REPORT"
	echo "errors: $errors"
	echo "killed $killed of $total"
} > "$OUT"
echo "errors: $errors"
echo "killed $killed of $total"
[ "$killed" -eq "$total" ]
