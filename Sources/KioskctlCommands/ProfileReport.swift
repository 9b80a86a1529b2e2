import KioskCore
import KioskInput

/// The human form of `kioskctl profile show`: every setting, defaults included, one per line.
enum ProfileReport {
    static func text(_ profile: Profile, name: String) -> String {
        var lines: [String] = []
        lines.append("profile      \(name)")
        lines.append("app          \(profile.app?.rawValue ?? "(any)")")
        if profile.app != nil {
            lines.append("app-owner    \(profile.appOwner.map { "\($0)" } ?? "root only")")
        }
        if !profile.description.isEmpty { lines.append("description  \(profile.description)") }
        let b = profile.buttons
        lines.append(
            "buttons      power \(b.power.rawValue), volume \(b.volume.rawValue), home \(b.home.rawValue), keyboard \(b.keyboard.rawValue)"
        )
        let allowed = b.allowedChords.isEmpty ? "" : " but \(b.allowedChords.joined(separator: ", "))"
        lines.append("chords       escape chords \(b.escapeChords.rawValue)\(allowed)")
        let combos = b.lockedCombos + b.comboGroups.map { "group \($0)" }
        if !combos.isEmpty { lines.append("combos       locked: \(combos.joined(separator: ", "))") }
        lines.append("extra keys   \(b.extraLockedKeys.isEmpty ? "none" : b.extraLockedKeys.joined(separator: " "))")
        switch profile.touch.mode {
        case .all: lines.append("touch        works everywhere")
        case .none: lines.append("touch        off")
        case .regions: lines.append("touch        works outside \(profile.touch.lockedRegions.count) locked region(s)")
        }
        for region in profile.touch.lockedRegions {
            switch region.shape {
            case let .rect(x, y, width, height):
                lines.append("  region     \(region.name): rect x \(x) y \(y) width \(width) height \(height)")
            case .polygon(let points):
                lines.append(
                    "  region     \(region.name): polygon " + points.map { "(\($0.x), \($0.y))" }.joined(separator: " ")
                )
            }
        }
        if let count = profile.touch.maxContacts {
            lines.append("  fingers    at most \(count) at once (one more is dropped until it lifts)")
        }
        if let margin = profile.touch.edgeMargin {
            lines.append("  edges      contacts that start within \(margin) of an edge are dropped")
        }
        lines.append("pointer      \(profile.pointer.mode.rawValue) (\(pointerMeaning(profile)))")
        let a = profile.accessibility
        let passes = a.allowedKeys + profile.screenReaderKeys + a.allowedCombos + profile.screenReaderCombos
        if !passes.isEmpty {
            var seen = Set<String>()
            let names = passes.filter { seen.insert($0).inserted }
            let reader = a.screenReader.map { " (\($0.rawValue)'s keys with them)" } ?? ""
            lines.append("accessible   always pass: \(names.joined(separator: ", "))\(reader)")
        }
        let features =
            (a.stickyKeys ? ["sticky keys"] : []) + (a.slowKeys.map { ["slow keys \($0.kioskText)"] } ?? [])
            + (a.bounceKeys.map { ["bounce keys \($0.kioskText)"] } ?? [])
        if !features.isEmpty { lines.append("key access   \(features.joined(separator: ", "))") }
        for device in profile.devices {
            let hidden = device.hidePointer ? (device.passes == .nothing ? "pointer hidden" : ", pointer hidden") : ""
            let passes = device.passes == .nothing ? "" : "\(device.passes.rawValue) pass"
            lines.append("  device     \(device.summary): \(passes)\(hidden)")
        }
        if profile.presets.isEmpty { lines.append("presets      none") }
        for preset in profile.presets {
            lines.append("  preset     \(preset.restriction) = \(preset.state.rawValue)")
        }
        if let limit = profile.session.timeLimit {
            let warnings = profile.session.warnings.map(\.kioskText).joined(separator: ", ")
            lines.append("time limit   \(limit.kioskText)" + (warnings.isEmpty ? "" : ", warnings at \(warnings) left"))
            if let count = profile.session.visitorExtensions, let length = profile.session.extensionLength {
                lines.append(
                    "extensions   the visitor may add \(length.kioskText) \(count) times, offered \(profile.session.warnBefore.kioskText) before the end"
                )
            } else {
                lines.append("extensions   none (the visitor cannot extend the time limit)")
            }
        } else {
            lines.append("time limit   none")
        }
        if let gesture = profile.session.exitGesture {
            lines.append("exit gesture \(gesture.key) ×\(gesture.presses) within \(gesture.within.kioskText)")
        } else {
            lines.append("exit gesture none (end with `kioskctl end`)")
        }
        let session = profile.session
        var cleaning = [session.cleaningGesture.map { "\($0.key) ×\($0.presses) within \($0.within.kioskText)" }]
        cleaning.append(
            session.touchCleaningGesture.map { "\($0.taps) taps \($0.corner.rawValue) within \($0.within.kioskText)" })
        let gestures = cleaning.compactMap { $0 }
        if !gestures.isEmpty {
            lines.append(
                "cleaning     \(gestures.joined(separator: " or ")) holds input \(session.cleaningTime.kioskText)")
        }
        lines.append(
            "passcode     "
                + (profile.passcodeHash.map { "hash in profile (\($0.prefix(4))…)" }
                    ?? "the one set with `kioskctl passcode set`"))
        return lines.joined(separator: "\n") + "\n"
    }

    /// What the pointer mode comes to with this profile's touch mode.
    static func pointerMeaning(_ profile: Profile) -> String {
        switch profile.filterPolicy.pointer {
        case .allowed: "mice, touchpads and pens work"
        case .locked: "mice, touchpads and pens are locked"
        case .regions: "pens judged like touch; mice and touchpads locked"
        }
    }
}
