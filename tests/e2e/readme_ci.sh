#!/usr/bin/env bash
# The README's CI recipes copy cleanly: the GitHub Actions and GitLab CI
# examples (the ```yaml blocks after "GitHub Actions:" and "GitLab CI:")
# parse as YAML, and their shell steps, run in order in a scratch git
# repository with kprof on PATH (sudo a pass-through), record a tiny
# benchmark (tests/workloads/spin_fp, 0.1 s of CPU: one hot function, so a
# same-build comparison has nothing to flag) five times a side, compare
# them and pass (exit 0), leaving every file the job then uploads.
# The non-shell steps are done by the test: the GitHub checkouts (the repo
# and base/), "build ./bench here and in base/" (a script running spin)
# before the first step that runs ./bench.
source "$(dirname "$0")/lib.bash"

command -v python3 >/dev/null && python3 -c 'import yaml' 2>/dev/null ||
	{ echo "SKIP: python3-yaml (scripts/deps --test installs it)"; exit 77; }

mkdir -p "$T/bin"
ln -s "$KPROF" "$T/bin/kprof"
printf '#!/bin/sh\nexec "$@"\n' >"$T/bin/sudo"
printf '#!/bin/sh\nexec %q 0.1\n' "$KP_WORKLOADS/spin_fp" >"$T/bench"
chmod +x "$T/bin/sudo" "$T/bench"

# Writes the shell steps of the recipe named NAME, NUL-separated, into OUT;
# "@checkout PATH" stands for a GitHub checkout step. Fails (with the
# parser's message) when the block is missing or is not YAML.
steps() { # name out
	python3 - "$KP_SRC/README.md" "$1" "$2" <<'PY'
import re, sys, yaml
readme, name, out = sys.argv[1:]
text = open(readme, encoding="utf-8").read()
m = re.search(r"^" + re.escape(name) + r":\n\n```yaml\n(.*?)^```$", text, re.M | re.S)
if not m:
    sys.exit(f"no ```yaml block after '{name}:' in README.md")
doc = yaml.safe_load(m.group(1))
steps = []
if name == "GitHub Actions":
    for job in doc["jobs"].values():
        for s in job["steps"]:
            if "run" in s:
                steps.append(s["run"])
            elif s.get("uses", "").startswith("actions/checkout"):
                steps.append("@checkout " + (s.get("with") or {}).get("path", "."))
    paths = [p for j in doc["jobs"].values() for s in j["steps"]
             if s.get("uses", "").startswith("actions/upload-artifact")
             for p in s["with"]["path"].split()]
else:
    for job in doc.values():
        steps.extend(job["script"])
    paths = [p for job in doc.values() for p in job["artifacts"]["paths"]]
    paths += [p for job in doc.values() for p in job["artifacts"]["reports"].values()]
with open(out, "w") as f:
    f.write("\0".join(steps) + "\0")
with open(out + ".paths", "w") as f:
    f.write("\n".join(paths) + "\n")
PY
}

# Runs the steps in OUT in a fresh git repository DIR, as CI would (bash
# -e, each step in the job's folder); prints the failing step.
run_steps() { # stepsfile dir
	local dir=$2 step built=0 rc
	mkdir -p "$dir" && cd "$dir" || return 1
	git init -q . && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m base
	export CI_MERGE_REQUEST_DIFF_BASE_SHA
	CI_MERGE_REQUEST_DIFF_BASE_SHA=$(git rev-parse HEAD)
	while IFS= read -r -d '' step; do
		case "$step" in
		"@checkout .") continue ;;
		"@checkout "*) mkdir -p "${step#@checkout }"; continue ;;
		esac
		if [ "$built" = 0 ] && [[ "$step" == *./bench* ]]; then
			cp "$T/bench" ./bench && cp "$T/bench" base/bench || return 1
			built=1
		fi
		PATH=$T/bin:$PATH bash -e -c "$step" >"$dir/step.out" 2>"$dir/step.err"
		rc=$?
		if [ "$rc" -ne 0 ]; then
			echo "step exited $rc: $step"
			head -c 600 "$dir/step.err"
			return 1
		fi
	done <"$1"
	[ "$built" = 1 ] || { echo "no step ran ./bench"; return 1; }
}

for recipe in "GitHub Actions" "GitLab CI"; do
	s=$T/${recipe// /_}.steps
	if ! steps "$recipe" "$s" >"$T/parse.err" 2>&1; then
		fail "$recipe: the README's example parses as YAML: $(tail -c 400 "$T/parse.err")"
		continue
	fi
	ok "$recipe: the README's example parses as YAML"
	d=$T/${recipe// /_}
	out=$( (run_steps "$s" "$d") 2>&1)
	check "$recipe: every shell step ran and the same-build diff passed (exit 0) $out" [ -z "$out" ]
	missing=""
	while IFS= read -r p; do
		[ -n "$p" ] || continue
		# shellcheck disable=SC2086 # the artifact paths are globs (diff.*)
		compgen -G "$d/$p" >/dev/null || missing+=" $p"
	done <"$s.paths"
	check "$recipe: every artifact the job uploads was written (missing:$missing)" [ -z "$missing" ]
	n=$(find "$d/runs/base" "$d/runs/new" -name '*.kprof' 2>/dev/null | wc -l)
	check "$recipe: five recordings a side ($n)" [ "$n" -eq 10 ]
done
finish
