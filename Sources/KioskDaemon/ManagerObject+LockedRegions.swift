import KioskAPI
import KioskCore
import SystemdKit

/// Seeing locked regions (docs/dbus-api.md § Seeing locked regions): `LockedRegions`, the
/// active session's locked touch regions for a display to shade over the app. Read-only and
/// derived from the session's profile (`Profile.shadedRegions`, the filter's own regions); its
/// `PropertiesChanged` comes with the session's (start, end, expiry, reload).
extension ManagerObject {
    /// `LockedRegions` (`a(sdad)`): each region's name, shade opacity and outline (x, y pairs
    /// in fractions of the screen); empty unless a session is active (not inactive, not expired)
    /// and its profile shows its locked regions.
    var lockedRegionsProperties: [BusProperty] {
        [
            BusProperty(Member.lockedRegions, "a(sdad)") { [unowned self] in
                Self.lockedRegionsValue(state.session.state == .active ? activeProfile?.shadedRegions ?? [] : [])
            }
        ]
    }

    /// The wire form of `regions`.
    static func lockedRegionsValue(_ regions: [ShadedRegion]) -> DBusValue {
        .array(
            elementSignature: "(sdad)",
            regions.map {
                .structure([
                    .string($0.name), .double($0.opacity),
                    .array(elementSignature: "d", $0.flatOutline.map(DBusValue.double)),
                ])
            })
    }
}
