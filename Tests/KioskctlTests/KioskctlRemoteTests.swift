import BusTestSupport
import Foundation
import Glibc
import KioskClient
import KioskCore
import KioskTestSupport
import KioskdProcessTestSupport
import Testing

/// `kioskctl -H user@host` through sd-bus's remote transport, against a real `sshd` whose
/// "machine" is the private bus the test's kioskd is on. Needs root (namespaces, `sshd`).
///
/// sd-bus turns `-H root@localhost` into `ssh -xT root@localhost systemd-stdio-bridge` (and
/// `host:port`, `[::1]:port` into `ssh -xT -p port …`). systemd-stdio-bridge 252 connects to
/// `unix:path=/run/dbus/system_bus_socket`, its compiled-in default, and ignores
/// `DBUS_SYSTEM_BUS_ADDRESS`; and ssh reads `~/.ssh/config` from the passwd entry's home, not
/// `$HOME`. So environment variables cannot point either end anywhere: `RemoteHost` gives
/// each its own mount namespace instead (see there).
@Suite(
    .serialized,
    .enabled(
        if: Root.isRoot, Comment(rawValue: Root.needs("sshd and kioskctl in network and mount namespaces of their own"))
    ))
struct KioskctlRemoteTests {
    typealias Fixture = KioskctlBusTests.Fixture

    /// `status`, `apps` and `--json status` print over `-H` exactly what they print locally
    /// against the same kioskd, with the host as `user@host`, `user@host:port` and
    /// `user@[::1]:port`; a `deny` over `-H`
    /// changes that kioskd. Every invocation is an SSH login that sshd logged.
    @Test func verbsOverSSHMatchTheLocalOutput() async throws {
        let f = try await Fixture()
        defer { f.stop() }
        let remote = try RemoteHost(systemBus: f.bus)
        defer { remote.stop() }

        // Where kioskctl runs there is no bus but the one -H reaches: without -H it finds none.
        let noHost = try remote.ctl(["status"])
        #expect(noHost.status == 1)
        #expect(noHost.stdout == "")
        #expect(
            noHost.stderr
                == "Failed to read the status: Could not connect to the system bus: No such file or directory (errno 2).\n"
        )

        var logins = 0
        for host in ["root@localhost", "root@127.0.0.1:2222", "root@[::1]:2222"] {
            for verb in [["status"], ["apps"], ["--json", "status"]] {
                let local = try f.ctl(verb)
                #expect(local.status == 0, "\(local)")
                let overSSH = try remote.ctl(["-H", host] + verb)
                logins += 1
                #expect(overSSH.status == 0, "\(host) \(verb): \(overSSH)\nsshd: \(remote.log)")
                #expect(overSSH.stdout == local.stdout, "\(host) \(verb)")
                #expect(overSSH.stderr == "", "\(host) \(verb)")
            }
        }
        #expect(try f.ctl(["apps"]).stdout.contains("org.example.MuseumMap             2       0"))

        let before = f.kioskd.stateBytes
        let deny = try remote.ctl(["-H", "root@localhost", "deny", KioskctlBusTests.app, KioskctlBusTests.controls])
        logins += 1
        #expect(deny.status == 0, "\(deny)")
        #expect(deny.stdout == "Denied org.example.MuseumMap.controls.\n")
        #expect(deny.stderr == "")
        // The private bus's kioskd is the one that changed, and saved it.
        #expect(try await f.manager.restrictionState(of: KioskctlBusTests.controls, in: KioskctlBusTests.app) == .deny)
        #expect(f.kioskd.stateBytes != before)
        let status = try remote.ctl(["-H", "root@localhost", "status"])
        logins += 1
        #expect(status.stdout.contains("restrictions 18, 1 denied\n"), "\(status)")
        let localStatus = try f.ctl(["status"])
        #expect(status.stdout == localStatus.stdout)

        // Every remote run went through sshd, as root, with the test's key.
        #expect(
            remote.log.components(separatedBy: "Accepted publickey for root from ").count - 1 == logins, "\(remote.log)"
        )
    }

    /// ssh checks the host key as it would for an admin: a host name not in known_hosts (the same
    /// sshd, reached as 127.0.0.2) is refused before any bus traffic, and nothing changes.
    @Test func unknownHostKeyIsRefused() async throws {
        let f = try await Fixture()
        defer { f.stop() }
        let remote = try RemoteHost(systemBus: f.bus)
        defer { remote.stop() }
        let before = f.kioskd.stateBytes
        let deny = try remote.ctl(["-H", "root@127.0.0.2", "deny", KioskctlBusTests.app, KioskctlBusTests.controls])
        #expect(deny.status == 1)
        #expect(deny.stdout == "")
        // ssh's own lines (it ends them with CR LF), then kioskctl's.
        #expect(
            deny.stderr == "No ED25519 host key is known for 127.0.0.2 and you have requested strict checking.\r\n"
                + "Host key verification failed.\r\n"
                + "Failed to deny org.example.MuseumMap.controls: The connection to the system bus of root@127.0.0.2 closed.\n",
            "\(deny.stderr.debugDescription)")
        #expect(try await f.manager.restrictionState(of: KioskctlBusTests.controls, in: KioskctlBusTests.app) == .allow)
        #expect(f.kioskd.stateBytes == before)
        #expect(!remote.log.contains("Accepted publickey"), "\(remote.log)")
    }
}

extension KioskctlBusTests.Fixture {
    func ctl(_ arguments: [String]) throws -> ToolOutput {
        try runTool(
            "/usr/bin/setsid", ["-w", BuildProducts.path(of: "kioskctl")] + arguments, environment: bus.environment)
    }
}

/// A "remote machine" made of namespaces: a real `sshd` in its own network and mount namespace,
/// whose `/run` is a tmpfs holding only `/run/sshd` (its privilege-separation dir),
/// `/run/dbus/system_bus_socket`, a link to the private bus, and `/run/openssh-server`, the
/// unpacked package (below); its `/root` is an empty temp dir, so
/// the login shell reads none of the machine's dotfiles. It listens on ports 22 and 2222 of
/// 0.0.0.0 and ::1 inside that namespace (whose only interface is its own loopback), so `root@localhost` works as an admin types it, with
/// no port taken on the machine and no race for a free one with other tests.
///
/// kioskctl runs in that network namespace (`nsenter`) and a mount namespace of its own where
/// `/root` is a temp home whose `.ssh/config` names the test's key and known_hosts, and `/run` is
/// an empty tmpfs; `DBUS_SYSTEM_BUS_ADDRESS` names a socket that does not exist. No bus but the
/// remote's can be reached from either end: if `-H` talked to a local bus, it would fail.
///
/// The sshd is the one `Tests/Support/fetch-sshd` unpacked from the openssh-server .deb into the
/// cache (`make test` runs it first): installing the package would, on a machine booted with
/// systemd, also enable and start the machine's own ssh.service on port 22. Nothing of the
/// package's postinst has run, so sshd's mount namespace also gets its privilege-separation user:
/// a copy of `/etc/passwd` with an `sshd` entry, bind-mounted over the machine's (sshd 9.2 exits
/// with "Privilege separation user sshd does not exist" without it; `/etc/group` needs nothing,
/// the entry's group is nogroup, as Debian's is). No user is added to the machine.
///
/// Host and client keys are fresh ed25519 keys; sshd runs with `UsePAM no`,
/// `PermitRootLogin prohibit-password` and `StrictModes no` (the keys sit under /tmp, which is
/// world-writable). Nothing of the machine's ssh configuration or keys is read or written, except
/// the client's `/etc/ssh/ssh_config` (the user config, read first, sets every option that matters).
final class RemoteHost: Sendable {
    let directory: URL
    let sshd: ChildProcess
    var clientHome: String { directory.appendingPathComponent("client-home").path }
    var logPath: String { directory.appendingPathComponent("sshd.log").path }
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    static let ports = [22, 2222]

    init(systemBus bus: PrivateBus) throws {
        let sshdPath = try Self.unpackedSSHD()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "remote-host-\(UUID().uuidString.prefix(8))")
        let fm = FileManager.default
        let dir = directory.path
        for sub in ["", "/server", "/remote-home", "/client-home/.ssh"] {
            try fm.createDirectory(
                atPath: dir + sub, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        do {
            for (name, comment) in [("host_key", "kioskd-test-host"), ("client_key", "kioskd-test-client")] {
                let keygen = try runTool(
                    "/usr/bin/ssh-keygen",
                    ["-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", "\(dir)/server/\(name)"])
                guard keygen.status == 0 else { throw HarnessError("ssh-keygen failed: \(keygen)") }
            }
            let clientKey = try String(contentsOfFile: "\(dir)/server/client_key.pub", encoding: .utf8)
            try clientKey.write(toFile: "\(dir)/server/authorized_keys", atomically: true, encoding: .utf8)
            let listen = Self.ports.flatMap { ["ListenAddress 0.0.0.0:\($0)", "ListenAddress [::1]:\($0)"] }
            try
                (listen + [
                    "HostKey \(dir)/server/host_key",
                    "AuthorizedKeysFile \(dir)/server/authorized_keys",
                    "PermitRootLogin prohibit-password",
                    "PubkeyAuthentication yes",
                    "PasswordAuthentication no",
                    "KbdInteractiveAuthentication no",
                    "UsePAM no",
                    "StrictModes no",
                    "PidFile none",
                    "Subsystem sftp none",
                    // The package's own moduli (for diffie-hellman-group-exchange), not the machine's.
                    "ModuliFile \(Self.packageMount)/etc/ssh/moduli",
                ]).joined(separator: "\n").appending("\n").write(
                    toFile: "\(dir)/server/sshd_config", atomically: true, encoding: .utf8)

            let config = """
                Host *
                  IdentityFile \(dir)/server/client_key
                  IdentitiesOnly yes
                  UserKnownHostsFile \(dir)/client-home/.ssh/known_hosts
                  GlobalKnownHostsFile /dev/null
                  StrictHostKeyChecking yes
                  UpdateHostKeys no
                  BatchMode yes
                  GSSAPIAuthentication no

                """
            try config.write(toFile: "\(dir)/client-home/.ssh/config", atomically: true, encoding: .utf8)
            chmod("\(dir)/client-home/.ssh/config", 0o600)
            // The host key under every name the tests use (not 127.0.0.2: unknownHostKeyIsRefused).
            let hostKey = try String(contentsOfFile: "\(dir)/server/host_key.pub", encoding: .utf8)
                .split(separator: " ").prefix(2).joined(separator: " ")
            try "localhost,127.0.0.1,::1,[localhost]:2222,[127.0.0.1]:2222,[::1]:2222 \(hostKey)\n"
                .write(toFile: "\(dir)/client-home/.ssh/known_hosts", atomically: true, encoding: .utf8)

            try Self.passwdWithSSHDUser().write(toFile: "\(dir)/server/passwd", atomically: true, encoding: .utf8)
            chmod("\(dir)/server/passwd", 0o644)

            let socket = "\(bus.directory.path)/bus"
            let script = """
                set -e
                ip link set lo up
                mount -t tmpfs -o mode=0755 tmpfs /run
                mkdir /run/sshd /run/dbus \(Self.packageMount)
                ln -s "$1" /run/dbus/system_bus_socket
                mount --bind -o ro "$5" \(Self.packageMount)
                mount --bind "$2" /root
                mount --bind "$4" /etc/passwd
                exec \(Self.packageMount)/usr/sbin/sshd -D -e -f "$3"
                """
            let logFD = open("\(dir)/sshd.log", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard logFD >= 0 else { throw HarnessError("Could not create \(dir)/sshd.log.") }
            defer { close(logFD) }
            // unshare and sh exec, so this pid is sshd's (the listener), in the new namespaces.
            sshd = try ChildProcess.spawn(
                "/usr/bin/unshare",
                [
                    "--net", "--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh",
                    socket, "\(dir)/remote-home", "\(dir)/server/sshd_config", "\(dir)/server/passwd",
                    Self.packageRoot(ofSSHD: sshdPath),
                ], stdout: logFD, stderr: logFD)
        } catch {
            try? fm.removeItem(at: directory)
            throw error
        }
        let listening = { self.log.components(separatedBy: "Server listening on ").count - 1 >= 2 * Self.ports.count }
        guard eventually(every: .milliseconds(20), { listening() || !sshd.isRunning }), listening() else {
            let text = log
            stop()
            throw HarnessError("sshd did not start listening: \(text)")
        }
    }

    /// The sshd `Tests/Support/fetch-sshd` unpacked (its `--check` fetches nothing); a clear
    /// error naming the script if it has not run. Never a skip: `make test` runs the script.
    static func unpackedSSHD() throws -> String {
        let script = "\(root)/Tests/Support/fetch-sshd"
        let check = try runTool(script, ["--check"])
        let path = check.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        guard check.status == 0, path.hasPrefix("/"), FileManager.default.isExecutableFile(atPath: path) else {
            throw HarnessError(
                "KioskctlRemoteTests needs the sshd that \(script) unpacks from the openssh-server .deb "
                    + "(make test runs it; run it once, as root, after apt-get update). \(script) --check: \(check)")
        }
        return path
    }

    /// Where sshd's mount namespace sees the unpacked package: the cache is usually under /root,
    /// which the empty remote home hides, and sshd re-executes itself from its own path.
    static let packageMount = "/run/openssh-server"

    /// The unpacked package's root: the sshd path without `usr/sbin/sshd`.
    static func packageRoot(ofSSHD path: String) -> String {
        URL(fileURLWithPath: path).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .path
    }

    /// `/etc/passwd` for sshd's mount namespace: the machine's lines, any `sshd` entry replaced by
    /// the test's (a uid below 1000 that no other entry has, group nogroup, home /run/sshd,
    /// nologin), so it is the same whether or not the machine ever had openssh-server.
    static func passwdWithSSHDUser() throws -> String {
        let lines = try String(contentsOfFile: "/etc/passwd", encoding: .utf8)
            .split(separator: "\n").filter { !$0.hasPrefix("sshd:") }
        let uids = Set(
            lines.compactMap { line in
                line.split(separator: ":", omittingEmptySubsequences: false).dropFirst(2).first.flatMap { Int($0) }
            })
        guard let uid = (100..<1000).reversed().first(where: { !uids.contains($0) }) else {
            throw HarnessError("No free uid below 1000 in /etc/passwd for sshd's privilege-separation user.")
        }
        return (lines + ["sshd:x:\(uid):65534:kioskd test sshd:/run/sshd:/usr/sbin/nologin"]).joined(separator: "\n")
            + "\n"
    }

    /// Runs kioskctl as an admin on another machine would, in the sshd's network namespace and
    /// a mount namespace with the test's `~/.ssh` and no `/run` (see the type's comment).
    func ctl(_ arguments: [String]) throws -> ToolOutput {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=\(directory.path)/no-local-bus"
        environment["DBUS_SESSION_BUS_ADDRESS"] = nil
        let script = """
            set -e
            mount -t tmpfs -o mode=0755 tmpfs /run
            mount --bind "$1" /root
            shift
            exec "$@"
            """
        return try runTool(
            "/usr/bin/nsenter",
            [
                "--net=/proc/\(sshd.pid)/ns/net", "/usr/bin/unshare", "--mount", "--propagation", "private",
                "/usr/bin/setsid", "-w", "/bin/sh", "-c", script, "sh", clientHome, BuildProducts.path(of: "kioskctl"),
            ] + arguments, environment: environment, timeout: .seconds(30))
    }

    /// Stops sshd once its connections have ended (so that none is left to init), and removes
    /// the temp dir.
    func stop() {
        let children = "/proc/\(sshd.pid)/task/\(sshd.pid)/children"
        eventually(timeout: .seconds(3), every: .milliseconds(20)) {
            (try? String(contentsOfFile: children, encoding: .utf8))?.trimmingCharacters(in: .whitespaces).isEmpty ?? true
        }
        sshd.signal(SIGTERM)
        sshd.wait(timeout: .seconds(5))
        try? FileManager.default.removeItem(at: directory)
    }
}
