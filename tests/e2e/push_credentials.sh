# The continuous agent's credentials (docs/security.md, "Credentials"),
# against a local Pyroscope receiver (tests/tools/profile-receiver):
# - a --push URL's user:password and a credential --header given on the
#   command line anyway: another user (uid 65534) reading /proc/PID/cmdline
#   sees "***" where they were, the server still gets them, kprof says so
#   in one warning, and neither the recording's metadata (its command line,
#   in .kprof and pprof) nor stderr holds them;
# - a token file another user owns, or that others may read or write, is
#   refused in one line naming it, exit 2, nothing sent;
# - the token from KPROF_PUSH_TOKEN (not inherited by the command kprof
#   runs) and headers from $CREDENTIALS_DIRECTORY/kprof.push-headers reach
#   the server.
# Each run profiles one short command (no -a): no whole-machine lock.
. "$(dirname "$0")/lib.bash"
. "$(dirname "$0")/continuous_lib.bash"

PASS=pa55-S3cret
ORG=tenant-S3cret
start_receivers up
base=$(url up)
hostport=${base#http://}
mkdir "$T/a"

# 1. secrets on the command line anyway
"$KPROF" --every 1 --push "pyroscope=http://admin:$PASS@$hostport" \
	--header "X-Scope-OrgID: $ORG" --header 'X-Env: prod' \
	-o "$T/a/w-%s.kprof" -o "$T/a/w-%s.pb.gz" -- "$SPIN" 2 2>"$T/a.err" &
kp=$!
# what another user reads, once kprof has parsed its options (a few ms;
# bounded at 10 s: on the old code the secret stays)
for _ in $(seq 100); do
	setpriv --reuid=65534 --regid=65534 --clear-groups cat "/proc/$kp/cmdline" 2>/dev/null |
		tr '\0' ' ' >"$T/cmdline"
	grep -q '\*\*\*' "$T/cmdline" && break
	sleep 0.1
done
wait $kp
status=$?
sed 's/^/  cmdline: /' "$T/cmdline"
echo
sed 's/^/  stderr: /' "$T/a.err"
check "exit status 0 ($status)" [ "$status" -eq 0 ]
check "another user reads the options but not the password nor the header's value" \
	sh -c "grep -q 'pyroscope=http://\*\*\*@$hostport' '$T/cmdline' &&
		grep -q 'X-Scope-OrgID: \*\*\*' '$T/cmdline' && grep -q 'X-Env: prod' '$T/cmdline' &&
		! grep -q -e '$PASS' -e '$ORG' -e admin '$T/cmdline'"
auth="Basic $(printf 'admin:%s' "$PASS" | base64)"
n=$(grep -l "\"Authorization\": \"$auth\"" "$T/up"/*.json 2>/dev/null | xargs -r grep -il "\"x-scope-orgid\": \"$ORG\"" | wc -l)
check "the server got the user:password and the header in each of its $(nsaved up pyroscope) windows ($n)" \
	[ "$n" -ge 1 -a "$n" -eq "$(nsaved up pyroscope)" ]
check "one warning, advising another way" [ "$(grep -c 'credential was given on the command line' "$T/a.err")" -eq 1 ]
check "stderr holds no secret" lacks "$T/a.err" "$PASS|$ORG"
for f in "$T"/a/*.kprof; do
	"$KPROF" report -f pprof -o "$f.pb.gz" "$f" 2>/dev/null
done
for f in "$T"/a/*.pb.gz; do
	zcat "$f" | tr -c '[:print:]' '\n' | grep '^command=' >"$f.command"
	check "$(basename "$f"): the command line, without the secrets" \
		sh -c "grep -q 'http://\*\*\*@' '$f.command' && ! grep -q -e '$PASS' -e '$ORG' '$f.command'"
done

# 2. token files kprof must not take: exit 2, one line naming the file
refused() { # description file why [chown]
	local err=$T/refused.err before
	before=$(nsaved up pyroscope)
	"$KPROF" --every 1 -d 1 --push "pyroscope=$base" --token-file "$2" -- true 2>"$err"
	local st=$?
	sed 's/^/  stderr: /' "$err"
	check "$1: exit 2, one line naming it ($st)" \
		sh -c "[ $st -eq 2 ] && [ \$(wc -l <'$err') -eq 1 ] && grep -q '$2.*$3' '$err'"
	check "$1: nothing sent, the token not shown" \
		sh -c "[ $(nsaved up pyroscope) -eq $before ] && ! grep -q tok-VALUE '$err'"
}
printf 'tok-VALUE\n' >"$T/tok-666"
chmod 666 "$T/tok-666"
refused "a token file others may write (0666)" "$T/tok-666" "mode 0666"
printf 'tok-VALUE\n' >"$T/tok-644"
chmod 644 "$T/tok-644"
refused "a token file others may read (0644)" "$T/tok-644" "mode 0644"
if [ "$(id -u)" -eq 0 ]; then
	printf 'tok-VALUE\n' >"$T/tok-other"
	chmod 600 "$T/tok-other"
	chown 65534:65534 "$T/tok-other"
	refused "a token file another user owns" "$T/tok-other" "owned by uid 65534"
fi

# 3. the environment, and systemd's credentials
KPROF_PUSH_TOKEN=env-tok-1 "$KPROF" --every 1 --push "pyroscope=$base" -- \
	sh -c "env >'$T/child.env'; exec '$SPIN' 1.5" 2>"$T/env.err" &
kp=$!
# kprof's own /proc/PID/environ (root's to read): the token's bytes wiped
# once kprof has taken it (bounded at 10 s)
environ=held
for _ in $(seq 100); do
	tr '\0' '\n' <"/proc/$kp/environ" >"$T/environ" 2>/dev/null || break
	# before exec, the shell's environment: no KPROF_PUSH_TOKEN yet
	grep -q '^KPROF_PUSH_TOKEN=' "$T/environ" && ! grep -q 'env-tok-1' "$T/environ" &&
		{ environ=wiped; break; }
	sleep 0.1
done
wait $kp
st=$?
check "KPROF_PUSH_TOKEN: its bytes wiped from kprof's /proc/PID/environ ($environ)" [ "$environ" = wiped ]
check "KPROF_PUSH_TOKEN: exit 0 ($st), sent as the bearer token" \
	sh -c "[ $st -eq 0 ] && [ \$(grep -l '\"Authorization\": \"Bearer env-tok-1\"' '$T/up'/*.json | wc -l) -ge 1 ]"
check "KPROF_PUSH_TOKEN: not in the environment of the command kprof runs" \
	sh -c "[ -s '$T/child.env' ] && ! grep -q KPROF_PUSH_TOKEN '$T/child.env'"
mkdir -m 700 "$T/creds"
printf '# systemd LoadCredential=\nX-Scope-OrgID: cred-org\nAuthorization: Bearer cred-tok\n' >"$T/creds/kprof.push-headers"
chmod 400 "$T/creds/kprof.push-headers"
CREDENTIALS_DIRECTORY=$T/creds "$KPROF" --every 1 --push "pyroscope=$base" -- "$SPIN" 1 2>"$T/cred.err"
st=$?
check "\$CREDENTIALS_DIRECTORY/kprof.push-headers: exit 0 ($st), its headers sent" \
	sh -c "[ $st -eq 0 ] && [ \$(grep -l '\"Authorization\": \"Bearer cred-tok\"' '$T/up'/*.json | xargs -r grep -il '\"x-scope-orgid\": \"cred-org\"' | wc -l) -ge 1 ]"
cat "$T/env.err" "$T/cred.err" | sed 's/^/  stderr: /'
finish
