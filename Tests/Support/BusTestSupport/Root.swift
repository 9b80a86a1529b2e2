import Glibc

/// Whether the tests run as root, for the tests that cannot run otherwise (calling as `nobody`
/// through setpriv, polkitd in a mount namespace, sshd in namespaces of its own). They are
/// skipped with the reason when not root — `.enabled(if: Root.isRoot, Root.skip("…"))`, as the
/// VM suites are outside the VM — instead of failing; CI runs as root and skips none of them.
public enum Root {
    public static let isRoot = getuid() == 0

    /// The skip message: what the test needs root for.
    public static func needs(_ why: String) -> String {
        "needs root (\(why)); run as root, as CI does (make test)"
    }
}
