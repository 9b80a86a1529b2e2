#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# orca-memory: what the Orca screen reader costs in memory at a kiosk (docs/accessibility.md
# § A screen reader in the kiosk session).
#
#   usage:  scripts/orca-memory.sh            (make orca-memory; never part of make test)
#
# It builds a kiosk's accessibility stack of its own, as the kiosk session has it, and measures
# what Orca adds to it: a session dbus-daemon on a socket in a temporary directory (never the
# machine's buses), Xvfb on a display it picks itself (-displayfd), at-spi2-core's bus launcher
# (the accessibility bus; its registry is started on demand), and a GTK 4 window with a label,
# buttons, an entry and a check button (python3-gi) for Orca to read, which has the focus (no
# window manager: the pointer is over it). Then `orca --replace`, twice:
#
#   first start   an empty home (Orca writes its default settings, GStreamer builds its plugin
#                 registry), and Orca the display's first GTK 3 client: GDK 3 probes GLX, which
#                 maps Mesa (llvmpipe, libLLVM) into Orca, and saves the result on the root
#                 window (GDK_VISUALS), so no later GTK 3 client of that X server probes again.
#                 An X11 kiosk whose app is not GTK 3 pays this at every boot.
#   second start  the home the first left and the probe saved: Orca's later starts, and what a
#                 Wayland kiosk's Orca maps (GDK on Wayland makes no GLX probe).
#
# Each time it waits for Orca to be up by what Orca does, not by a clock: Orca's listeners
# registered at the AT-SPI registry, speech-dispatcher (which Orca spawns) running with its
# output modules, and Orca's first call to the app's accessible objects (a dbus-monitor on the
# accessibility bus sees it). Then it samples once a second until the memory holds still (the
# PSS sum moves ≤ 0.5 % three samples running; at most 30 s, and it says when that ran out) and
# reads each process's VmRSS (/proc/PID/status), Pss and Private_Clean + Private_Dirty
# (/proc/PID/smaps_rollup): Orca, speech-dispatcher, each output module, and for comparison the
# app and the accessibility bus before Orca and with it. The RSS sum counts a page shared
# between the processes once per process; PSS divides each page among the processes that map
# it, here and elsewhere on the machine (so it moves with what else runs); private pages are
# what would be freed without the process, and their sum is what Orca adds at least.
#
# Everything runs in a PID namespace of its own (unshare; as root, or in a user namespace
# otherwise), whose processes the kernel ends when the script does. It matters for Orca: 43.1's
# --replace SIGKILLs every process named orca of the same uid that it can see (/usr/bin/orca,
# cleanup()); in the namespace it sees only its own. Speech goes to ALSA's null device (a
# speech-dispatcher configuration and an .asoundrc in the private home): the voice is rendered
# and played as at a kiosk, with no sound card and no sound server. The app draws with GTK's
# cairo renderer (GSK_RENDERER=cairo).
#
# Exit status: 0 measured; 77 skipped (orca or another part not installed; the message names
# the package); 1 failed (the logs' tails on stderr).
set -euo pipefail

skip() { echo "orca-memory: skipped: $*" >&2; exit 77; }
fail() { echo "orca-memory: $*" >&2; exit 1; }

[[ -x /usr/bin/orca ]] || skip "orca is not installed (apt-get install --no-install-recommends orca)"
for need in /usr/bin/Xvfb:xvfb /usr/libexec/at-spi-bus-launcher:at-spi2-core /usr/bin/dbus-daemon:dbus-daemon \
  /usr/bin/dbus-monitor:dbus-bin /usr/bin/busctl:systemd /usr/bin/speech-dispatcher:speech-dispatcher \
  /usr/bin/unshare:util-linux; do
  [[ -x ${need%%:*} ]] || skip "${need%%:*} is missing (apt-get install ${need##*:})"
done
/usr/bin/python3 -c 'import gi; gi.require_version("Gtk", "4.0")' 2>/dev/null ||
  skip "python3-gi with GTK 4 does not import (apt-get install python3-gi gir1.2-gtk-4.0)"

# Into the PID namespace: the script again, as its first process; --kill-child ends the
# namespace if this outer process is killed.
if [[ -z ${ORCA_MEMORY_INNER:-} ]]; then
  user=()
  [[ $(id -u) == 0 ]] || user=(--user --map-root-user)
  exec /usr/bin/env ORCA_MEMORY_INNER=1 /usr/bin/unshare "${user[@]}" --pid --fork --mount-proc --kill-child \
    /bin/bash "$0" "$@"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/orca-memory.XXXXXX")
chmod 755 "$work"
pids=()     # what this script started, in order
orca_pids=()  # what one Orca start added (Orca, speech-dispatcher, its modules)

# TERM, then KILL what has not gone after 3 s; PIDs only (the namespace holds nothing else).
stop() {
  local pid deadline
  [[ $# -gt 0 ]] || return 0
  kill -TERM "$@" 2>/dev/null || true
  deadline=$((SECONDS + 3))
  for pid in "$@"; do
    while kill -0 "$pid" 2>/dev/null && [[ $(state "$pid") != Z ]] && ((SECONDS < deadline)); do sleep 0.05; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  wait "$@" 2>/dev/null || true
}
state() { sed -n 's/^State:\s*\(.\).*/\1/p' "/proc/$1/status" 2>/dev/null; }
cleanup() {
  local status=$? others=() i
  if ((status != 0 && status != 77)); then
    for log in "$work"/*.log; do [[ -s $log ]] && { echo "--- ${log##*/}" >&2; tail -n 15 "$log" >&2; }; done
  fi
  stop "${orca_pids[@]}"
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do stop "${pids[i]}"; done
  # The accessibility bus's registry, whatever else was started on demand: every process of the
  # namespace but this shell.
  for i in /proc/[0-9]*; do [[ ${i#/proc/} != "$$" ]] && others+=("${i#/proc/}"); done
  stop "${others[@]}"
  rm -rf "$work"
}
trap cleanup EXIT
# The shell is the namespace's first process, which ignores a signal it has no handler for.
trap 'exit 130' INT TERM HUP

# Waits until CONDITION (a command) succeeds, checking every 50 ms, for at most SECONDS.
wait_for() {
  local seconds=$1 what=$2
  shift 2
  local deadline=$((SECONDS + seconds))
  until "$@"; do
    ((SECONDS < deadline)) || fail "$what did not happen within $seconds s"
    sleep 0.05
  done
}
nonempty() { [[ -s $1 ]]; }

home=$work/home
runtime=$work/runtime
mkdir -p "$home/.config/speech-dispatcher" && mkdir -m 0700 "$runtime"
# speech-dispatcher reads the user's speechd.conf instead of /etc's: /etc's, and ALSA for the
# sound, whose default device here is the null one.
printf 'Include "/etc/speech-dispatcher/speechd.conf"\nAudioOutputMethod "alsa"\n' \
  >"$home/.config/speech-dispatcher/speechd.conf"
printf 'pcm.!default { type null }\n' >"$home/.asoundrc"
# A kiosk user's environment, nothing of the caller's.
env_session=(/usr/bin/env -i PATH=/usr/bin:/bin LANG=C.UTF-8 HOME="$home" XDG_RUNTIME_DIR="$runtime"
  XDG_CONFIG_HOME="$home/.config" XDG_DATA_HOME="$home/.local/share" XDG_CACHE_HOME="$home/.cache"
  GSETTINGS_BACKEND=memory)

# 1. The session bus.
"${env_session[@]}" /usr/bin/dbus-daemon --session --nofork --nopidfile \
  --address="unix:path=$work/session-bus" --print-address=3 3>"$work/session-address" 2>"$work/dbus.log" &
pids+=($!)
wait_for 10 "the session bus's address" nonempty "$work/session-address"
session_address=$(<"$work/session-address")

# 2. Xvfb, on the first free display (it writes the number when it accepts clients).
"${env_session[@]}" /usr/bin/Xvfb -displayfd 3 -nolisten tcp -screen 0 1280x800x24 3>"$work/display" 2>"$work/xvfb.log" &
pids+=($!)
wait_for 10 "Xvfb's display" nonempty "$work/display"
display=:$(<"$work/display")
env_session+=(DBUS_SESSION_BUS_ADDRESS="$session_address" DISPLAY="$display")

# 3. The accessibility bus, asked for as the kiosk session asks (org.a11y.Bus.GetAddress).
"${env_session[@]}" /usr/libexec/at-spi-bus-launcher --launch-immediately >"$work/at-spi-bus-launcher.log" 2>&1 &
pids+=($!)
a11y_address() {
  busctl --address="$session_address" --auto-start=no call org.a11y.Bus /org/a11y/bus org.a11y.Bus GetAddress \
    2>/dev/null | sed -n 's/^s "\(.*\)"$/\1/p'
}
has_a11y() { [[ -n $(a11y_address) ]]; }
wait_for 10 "org.a11y.Bus answering" has_a11y
a11y=$(a11y_address)
a11y_call() { busctl --address="$a11y" "$@" 2>/dev/null; }
pid_of_name() { a11y_call call org.freedesktop.DBus / org.freedesktop.DBus GetConnectionUnixProcessID s "$1" | sed -n 's/^u //p'; }

# 4. The app: a GTK 4 window with something to read, which says when it has the focus (what
# Orca reads first).
cat >"$work/app.py" <<'EOF'
import gi
gi.require_version("Gtk", "4.0")
from gi.repository import Gtk

def activate(app):
    window = Gtk.ApplicationWindow(application=app, title="Tickets")
    window.set_default_size(1280, 800)
    box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=12)
    box.append(Gtk.Label(label="Choose a ticket"))
    for name in ("Single", "Return", "Day pass", "Week pass"):
        box.append(Gtk.Button(label=name))
    box.append(Gtk.Entry(placeholder_text="Destination"))
    box.append(Gtk.CheckButton(label="Print a receipt"))
    window.set_child(box)
    window.connect("notify::is-active", lambda w, _: print("active" if w.is_active() else "inactive", flush=True))
    window.present()

app = Gtk.Application(application_id="org.kioskd.OrcaMemory")
app.connect("activate", activate)
app.run(None)
EOF
"${env_session[@]}" GSK_RENDERER=cairo /usr/bin/python3 "$work/app.py" >"$work/app.log" 2>&1 &
app=$!
pids+=("$app")
app_active() { grep -qsx active "$work/app.log"; }
wait_for 20 "the app's window getting the focus" app_active
# Its connection on the accessibility bus, once the registry lists it among the desktop's apps.
app_name=
app_registered() {
  local name
  for name in $(a11y_call call org.a11y.atspi.Registry /org/a11y/atspi/accessible/root org.a11y.atspi.Accessible \
    GetChildren | grep -o '":[0-9.]*"' | tr -d '"'); do
    [[ $(pid_of_name "$name") == "$app" ]] && { app_name=$name; return 0; }
  done
  return 1
}
wait_for 20 "the app on the AT-SPI registry" app_registered

kib() { sed -n "s/^$2:\s*\([0-9]*\) kB/\1/p" "$1"; }
rss() { kib "/proc/$1/status" VmRSS; }
pss() { kib "/proc/$1/smaps_rollup" Pss; }
private() { echo $(($(kib "/proc/$1/smaps_rollup" Private_Clean) + $(kib "/proc/$1/smaps_rollup" Private_Dirty))); }
sum_pss() { local pid total=0; for pid in "$@"; do total=$((total + $(pss "$pid"))); done; echo "$total"; }
# RSS, PSS and private KiB summed over PIDS, on one line.
group() {
  local pid r=0 p=0 u=0
  for pid in "$@"; do r=$((r + $(rss "$pid"))) p=$((p + $(pss "$pid"))) u=$((u + $(private "$pid"))); done
  echo "$r $p $u"
}
a11y_pids() { pgrep -x at-spi-bus-laun; pgrep -f '^/usr/bin/dbus-daemon --config-file=/usr/share/defaults/at-spi2/'; pgrep -x at-spi2-registr; }
module_pids() { pgrep -f '^/usr/lib/speech-dispatcher-modules/' || true; }
ms_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }

# Once a second until the PSS sum of PIDS moves ≤ 0.5 % three samples running, at most 30 s.
settle() {
  local previous current steady=0 waited=0
  previous=$(sum_pss "$@")
  while ((steady < 3 && waited < 30)); do
    sleep 1
    waited=$((waited + 1))
    current=$(sum_pss "$@")
    if ((200 * (current > previous ? current - previous : previous - current) <= previous)); then
      steady=$((steady + 1))
    else
      steady=0
    fi
    previous=$current
  done
  if ((steady < 3)); then echo "not settled after 30 s (measured anyway)"; else echo "settled after $waited s"; fi
}

row() { printf '  %-34s %15s %15s %15s\n' "$@"; }
# A row of two groups' figures, before/after.
row2() { row "$1" "$2/$5" "$3/$6" "$4/$7"; }

wait_for 10 "the AT-SPI registry" pgrep -x at-spi2-registr >/dev/null
read -r -a infra <<<"$(a11y_pids | tr '\n' ' ')"

echo "orca-memory: $(date -u +%Y-%m-%d), Orca $(/usr/bin/orca --version 2>/dev/null | head -n1)," \
  "speech-dispatcher $(dpkg-query -W -f='${Version}' speech-dispatcher 2>/dev/null)," \
  "GTK 4 $(dpkg-query -W -f='${Version}' libgtk-4-1 2>/dev/null), kernel $(uname -r), $(nproc) cores"
echo "  speech-dispatcher's modules installed: $(cd /usr/lib/speech-dispatcher-modules && echo sd_*)"
echo "  KiB; the RSS sums count a shared page once per process, the PSS sums are what the processes"
echo "  cost together, private is what would be freed without them"
echo "  the app alone: $(settle "$app" "${infra[@]}")"
read -r -a app_before <<<"$(group "$app")"
read -r -a infra_before <<<"$(group "${infra[@]}")"
# Every process of the session (the namespace's, but this shell), listed without a fork.
session_pids() { session=(); local d; for d in /proc/[0-9]*; do [[ ${d#/proc/} != "$$" ]] && session+=("${d#/proc/}"); done; }
session_pids
read -r -a session_before <<<"$(group "${session[@]}")"

# 5. Orca. The PID `orca` runs as is the one started here (/usr/bin/orca, a python3 script, is
# exec'd). Up when its listeners are at the registry, speech-dispatcher runs with its modules,
# and it has called the app over AT-SPI.
orca_start() {
  local label=$1 started=$EPOCHREALTIME monitor_log=$work/monitor-$2.log pidfile=$runtime/speech-dispatcher/pid/speech-dispatcher.pid
  rm -f "$pidfile"
  # Whether GDK 3 (Orca's GTK) finds its GLX probe's result on the root window already: the
  # first GTK 3 client of an X display probes GLX (Mesa's llvmpipe here) and saves it there.
  local probed="unknown (no xprop: apt-get install x11-utils)"
  if [[ -x /usr/bin/xprop ]]; then
    probed=no
    DISPLAY=$display /usr/bin/xprop -root GDK_VISUALS 2>/dev/null | grep -q '=' && probed=yes
  fi
  /usr/bin/dbus-monitor --address "$a11y" "type='method_call',destination='$app_name'" >"$monitor_log" 2>&1 &
  local monitor=$!
  pids+=("$monitor")
  wait_for 10 "dbus-monitor on the accessibility bus" grep -qs NameLost "$monitor_log"
  "${env_session[@]}" /usr/bin/orca --replace >"$work/orca-$2.log" 2>&1 </dev/null &
  orca=$!
  orca_pids=("$orca")
  orca_listening() {
    local name
    orca_names=()
    for name in $(a11y_call call org.a11y.atspi.Registry /org/a11y/atspi/registry org.a11y.atspi.Registry \
      GetRegisteredEvents | grep -o '":[0-9.]*"' | tr -d '"' | sort -u); do
      [[ $(pid_of_name "$name") == "$orca" ]] && orca_names+=("$name")
    done
    ((${#orca_names[@]} > 0))
  }
  speaking() { [[ -s $pidfile ]] && kill -0 "$(<"$pidfile")" 2>/dev/null && [[ -n $(module_pids) ]]; }
  orca_read_app() {
    local name
    for name in "${orca_names[@]}"; do grep -qsF "sender=$name " "$monitor_log" && return 0; done
    return 1
  }
  wait_for 60 "Orca's listeners at the AT-SPI registry ($label)" orca_listening
  wait_for 60 "speech-dispatcher with an output module ($label)" speaking
  wait_for 60 "Orca calling the app over AT-SPI ($label)" orca_read_app
  local ready calls settled mesa=no
  ready=$(ms_since "$started")
  orca_pids+=("$(<"$pidfile")")
  mapfile -t -O "${#orca_pids[@]}" orca_pids < <(module_pids)
  stop "$monitor"
  calls=$(grep -c "^method call" "$monitor_log" || true)
  settled=$(settle "${orca_pids[@]}" "$app")
  grep -q '/libLLVM' "/proc/$orca/maps" && mesa="yes ($(awk '/^[0-9a-f]+-/ { llvm = ($6 ~ /libLLVM/) } llvm && /^Rss:/ { kib += $2 } END { print kib }' "/proc/$orca/smaps") KiB RSS)"

  echo
  echo "$label"
  echo "  Orca up after $ready s (listeners at the registry, speech-dispatcher, $calls calls to the app); $settled"
  echo "  GDK's GLX probe already on the display: $probed; Mesa's libLLVM mapped in Orca: $mesa"
  row process RSS PSS private
  local pid name added app_now infra_now
  for pid in "${orca_pids[@]}"; do
    name=$(tr '\0' ' ' <"/proc/$pid/cmdline" | awk '{ n = $1; if (n ~ /python3$/) n = $2; sub(".*/", "", n); print n }')
    row "$name" "$(rss "$pid")" "$(pss "$pid")" "$(private "$pid")"
  done
  read -r -a added <<<"$(group "${orca_pids[@]}")"
  read -r -a app_now <<<"$(group "$app")"
  read -r -a infra_now <<<"$(group "${infra[@]}")"
  session_pids
  read -r -a session_now <<<"$(group "${session[@]}")"
  row "Orca's (the ${#orca_pids[@]} above)" "${added[@]}"
  row2 "the app, before Orca/with it" "${app_before[@]}" "${app_now[@]}"
  row2 "AT-SPI bus, before Orca/with it" "${infra_before[@]}" "${infra_now[@]}"
  row2 "the session, before Orca/with it" "${session_before[@]}" "${session_now[@]}"
  row "the session's growth" "$((session_now[0] - session_before[0]))" "$((session_now[1] - session_before[1]))" \
    "$((session_now[2] - session_before[2]))"
  stop "${orca_pids[@]}"
  orca_pids=()
}

orca_start "first start: an empty home, the display's first GTK 3 client" 1
orca_start "second start: Orca's settings and GStreamer's registry in the home" 2
