# strip-demo-passcode.awk — install an example profile without its [passcode] table.
#
# The examples in policies/ carry the hash of the demo passcode "1234" so that `make demo` can
# end their sessions. Installed in /etc/kioskd/profiles/ they would guard a real kiosk with a
# passcode everyone can read in the README, so `make install` drops the table (its header and
# its keys, up to the next table) and says so in its place.
/^\[passcode\]/ {
    print "# [passcode] was removed when this example was installed: the example's hash is the demo"
    print "# passcode \"1234\". The passcode set with `kioskctl passcode set` ends these sessions; or add"
    print "# a [passcode] table with a hash of your own (`mkpasswd -m yescrypt`)."
    skipping = 1
    next
}
skipping && /^[ \t]*\[/ { skipping = 0 }
skipping && /^[ \t]*[A-Za-z0-9_-]+[ \t]*=/ { next }
{ print }
