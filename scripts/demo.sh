#!/usr/bin/env bash
# make demo — what kioskd does today, on an embedded default: the bundled profiles in
# policies/, checked and resolved by kioskctl without a daemon, a profile with a typo
# refused at file:line:col, and the state store surviving a kill -9 mid-write; then the
# product itself on a private D-Bus: kioskd, the example app registering its restrictions,
# an admin denying one (the app is told), a guided-access session started with a bundled
# profile and ended with the passcode; and the input locks on fake kiosk hardware in a VM.
# It runs as root (kioskd lets root make admin changes; without polkit nobody else may),
# never touches the machine's bus, and stops and removes everything it started.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.build/debug}
work=$(mktemp -d /tmp/kioskd-demo.XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
  # Only what this script started, newest first.
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    kill "${pids[i]}" 2>/dev/null || true
    wait "${pids[i]}" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
# Shows a command, then runs it.
run() { printf '\033[36m$ %s\033[0m\n' "$1"; eval "$1"; }
# Shows a command that must fail with exit status 1 (kioskd refuses), then runs it.
refused() {
  printf '\033[36m$ %s\033[0m\n' "$1"
  local status=0
  eval "$1" || status=$?
  if [ "$status" != 1 ]; then echo "demo: expected exit status 1, got $status" >&2; exit 1; fi
  echo "(exit status 1, as it should be)"
}

step "An admin installs the bundled profiles, private to their owner (they hold a passcode hash), and checks them (no daemon needed)"
install -d -m 0700 "$work/profiles"
install -m 0600 policies/*.toml "$work/profiles/"
"$BIN/kioskctl" profile check "$work"/profiles/*.toml

step "…and looks at one as kioskd will apply it"
"$BIN/kioskctl" profile show policies/museum-map.toml

step "A profile with typos is refused, never silently weakened"
cat > "$work/typo.toml" <<'TOML'
[buttons]
powr = "locked"            # typo: would leave the power button working
volume = "lock"            # not a valid value
[touch]
mode = "regions"
[[touch.locked-region]]
rect = { x = 0.95, y = 0.0, width = 0.1, height = 0.1 }   # sticks out of the screen
[passcode]
hash = "1234"              # a plain passcode, never accepted
TOML
if "$BIN/kioskctl" profile check "$work/typo.toml"; then
  echo "demo: the broken profile was accepted" >&2; exit 1
fi

step "The state store survives kill -9 in the middle of writing"
"$BIN/kiosk-store-writer" "$work" 1 > "$work/committed" &
writer=$!
sleep 0.3
kill -9 "$writer"; wait "$writer" 2>/dev/null || true
echo "the writer committed $(wc -l < "$work/committed") states before it was killed;"
echo "the file on disk is whole: $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("version", d["version"], "with", len(d["state"]["registry"]["applications"]), "apps")' "$work/state.json")"

if [ "$(id -u)" != 0 ]; then
  printf '\n\033[1mDemo stopped here.\033[0m The rest makes admin changes, which kioskd allows root: run it as root.\n'
  exit 0
fi
export PATH="$PWD/$BIN:$PATH"

step "A private D-Bus for the demo (never the machine's bus)"
cat > "$work/bus.conf" <<XML
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$work/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
XML
run "dbus-daemon --config-file=$work/bus.conf --nofork --nopidfile --print-address=3 3>$work/address 2>$work/dbus.log &"
pids+=($!)
for _ in $(seq 100); do [ -s "$work/address" ] && break; sleep 0.05; done
[ -s "$work/address" ] || { echo "demo: dbus-daemon did not start:" >&2; cat "$work/dbus.log" >&2; exit 1; }
run "export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$work/bus   # kioskd, the app and kioskctl all use it"

step "kioskd on it, with a temp state dir and the bundled museum-map profile"
mkdir -p "$work/state"
run "kioskd --no-input --state-dir $work/state --profile-dir $work/profiles --runtime-dir $work/run 2>$work/kioskd.log &"
pids+=($!)
for _ in $(seq 100); do kioskctl status >/dev/null 2>&1 && break; sleep 0.05; done
run "kioskctl status"

# The app prints into a log; app_says waits for a line, then shows what it printed meanwhile.
shown=0
app_says() {
  for _ in $(seq 100); do grep -qF -- "$1" "$work/app.log" && break; sleep 0.05; done
  sleep 0.1
  tail -n +$((shown + 1)) "$work/app.log"
  shown=$(wc -l < "$work/app.log")
}

step "The example app (Examples/museum-map-app) registers its restrictions"
run "museum-map-app > $work/app.log &"
pids+=($!)
app_says "museum-map: the session is inactive"
run "kioskctl restrictions org.example.MuseumMap"

step "An admin denies one; the app is told at once"
run "kioskctl deny org.example.MuseumMap org.example.MuseumMap.zoom"
app_says "zoom is now deny"
run "kioskctl status"

step "A guided-access session with the museum-map profile (its presets reach the app)"
run "kioskctl start museum-map"
app_says "the session is active"
run "kioskctl status"

step "Ending it takes the passcode: a wrong one is refused, the demo passcode 1234 works"
refused "echo 0000 | kioskctl end --passcode-stdin"
run "echo 1234 | kioskctl end --passcode-stdin"
app_says "the session is inactive"
run "kioskctl status"

step "The locks on input devices: kioskd brokering fake kiosk hardware in a throw-away VM"
# The session above ran kioskd with --no-input: this machine's own keyboard is not the kiosk's.
# Here Debian's kernel boots under QEMU (Tests/VM/run-in-vm), fake devices are made through
# /dev/uinput, and python-evdev reads kioskd's clones, which is all a compositor would see.
printf '\033[36m$ %s\033[0m\n' "Tests/VM/run-in-vm scripts/demo-input.py"
{ if VM_UDEV=1 Tests/VM/run-in-vm /usr/bin/python3 scripts/demo-input.py "$PWD/$BIN" "$PWD/policies" 2>&1
  then echo 0 > "$work/vm.status"; else echo $? > "$work/vm.status"; fi; } | grep -v -e '^Starting systemd-udevd' -e '^run-in-vm: ' || true
status=$(cat "$work/vm.status")
if [ "$status" = 125 ] || [ "$status" = 124 ]; then
  echo "No VM could be started here (see Tests/VM/README.md): the input part is skipped; the session above ran with --no-input."
elif [ "$status" != 0 ]; then
  echo "The input demo failed (exit $status)." >&2
  exit 1
fi

printf '\n\033[1mDemo finished.\033[0m Stopping the app, kioskd and the bus.\n'
