import KioskAPI
import KioskInput
import TOMLKit

// The profile's tables, each read into its part of ``Profile``: the second half of
// `ProfileReader` (ProfileParser.swift has the entry points, reporting and typed access).
extension ProfileReader {
    // MARK: The profile

    static let topKeys = [
        "app", "app-owner", "description", "buttons", "touch", "pointer", "accessibility", "device", "restrictions",
        "session", "idle",
        "passcode", "browser",
    ]

    mutating func profile(_ root: TOMLTable) -> Profile {
        var profile = Profile()
        checkKeys(root, at: [], allowed: ProfileReader.topKeys)
        if let value = root["app"] {
            let path: TOMLPath = [.key("app")]
            if let text = string(value, at: path) {
                do { profile.app = try AppID(text) } catch {
                    self.error("app: \(error.message)", at: path, value: true)
                }
            }
        }
        if let value = root["app-owner"] {
            profile.appOwner = appOwner(value, at: [.key("app-owner")])
            if profile.app == nil {
                error(
                    "app-owner needs the profile's app: it says who may register that app", at: [.key("app-owner")],
                    value: true)
            }
        }
        if let value = root["description"], let text = string(value, at: [.key("description")]) {
            do {
                try Text.validate(text, what: "description", maxBytes: KioskWire.Limits.detailBytes, multiline: true)
                profile.description = text
            } catch { self.error(error.message, at: [.key("description")], value: true) }
        }
        if let value = root["buttons"], let table = table(value, at: [.key("buttons")]) {
            profile.buttons = buttons(table, at: [.key("buttons")])
        }
        if let value = root["touch"], let table = table(value, at: [.key("touch")]) {
            profile.touch = touch(table, at: [.key("touch")])
        }
        if let value = root["pointer"], let table = table(value, at: [.key("pointer")]) {
            checkKeys(table, at: [.key("pointer")], allowed: ["mode"])
            if let mode = table["mode"],
                let chosen = choice(
                    mode, at: [.key("pointer"), .key("mode")], [Profile.PointerMode.followTouch, .locked, .allowed])
            {
                profile.pointer.mode = chosen
            }
        }
        if let value = root["accessibility"], let table = table(value, at: [.key("accessibility")]) {
            profile.accessibility = accessibility(table, at: [.key("accessibility")], buttons: profile.buttons)
        }
        if let value = root["device"], let array = array(value, at: [.key("device")]) {
            profile.devices = devices(array, at: [.key("device")])
        }
        if let value = root["restrictions"], let table = table(value, at: [.key("restrictions")]) {
            profile.presets = presets(table, at: [.key("restrictions")])
        }
        if let value = root["session"], let table = table(value, at: [.key("session")]) {
            profile.session = session(table, at: [.key("session")])
        }
        if let value = root["idle"], let table = table(value, at: [.key("idle")]) {
            profile.idle = idle(table, at: [.key("idle")])
        }
        if let value = root["browser"], let table = table(value, at: [.key("browser")]) {
            profile.browser = browser(table, at: [.key("browser")], app: profile.app)
            presetNavigation(&profile)
        }
        if profile.session.appMayRequest && profile.app == nil {
            error(
                "session.app-may-request needs the profile's app: only that app may request a session of it",
                at: [.key("session"), .key("app-may-request")], value: true)
        }
        if let value = root["passcode"], let table = table(value, at: [.key("passcode")]) {
            profile.passcodeHash = passcode(table, at: [.key("passcode")])
        }
        return profile
    }

    /// `app-owner = 1000` or `app-owner = "kiosk-app"`: a uid other than root, or a user name as
    /// useradd takes them.
    mutating func appOwner(_ value: any TOMLValueConvertible, at path: TOMLPath) -> Profile.AppOwner? {
        if let int = value.int {
            guard let uid = UInt32(exactly: int), uid != 0, uid != UInt32.max else {
                error("app-owner \(int) is not a uid other than root (1 to 4294967294)", at: path, value: true)
                return nil
            }
            return .uid(uid)
        }
        guard expect(value, .string, at: path, what: "a uid or a user name"), let name = value.string else {
            return nil
        }
        let valid =
            !name.isEmpty && name.utf8.count <= 32 && name != "root"
            && name.utf8.allSatisfy {
                ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5f || $0 == 0x2d
            }
            && !(name.first!.isNumber || name.first == "-")
        guard valid else {
            error(
                "app-owner \(Text.quoted(name)) is not a user name other than root (lower-case letters, digits, _ and -, at most 32)",
                at: path, value: true)
            return nil
        }
        return .user(name)
    }

    mutating func buttons(_ table: TOMLTable, at path: TOMLPath) -> Profile.Buttons {
        var buttons = Profile.Buttons()
        checkKeys(
            table, at: path,
            allowed: [
                "power", "volume", "home", "keyboard", "escape-chords", "allowed-chords", "locked-combos",
                "combo-groups", "extra-locked-keys",
            ])
        let groups: [(String, WritableKeyPath<Profile.Buttons, Profile.ButtonPolicy>)] = [
            ("power", \.power), ("volume", \.volume), ("home", \.home), ("keyboard", \.keyboard),
        ]
        for (key, keyPath) in groups {
            if let value = table[key],
                let policy = choice(value, at: path + [.key(key)], [Profile.ButtonPolicy.locked, .allowed])
            {
                buttons[keyPath: keyPath] = policy
            }
        }
        if let value = table["escape-chords"],
            let policy = choice(value, at: path + [.key("escape-chords")], [Profile.ChordPolicy.blocked, .allowed])
        {
            buttons.escapeChords = policy
        }
        let allowable = Profile.Buttons.allowableChords
        buttons.allowedChords = strings(table, "allowed-chords", at: path, what: "a chord like \"Alt+Left\"") { name in
            allowable.contains(name)
                ? nil
                : "; the escape chords a profile may let through are \(allowable.map { Text.quoted($0) }.joined(separator: " and "))"
        }
        buttons.lockedCombos = strings(table, "locked-combos", at: path, what: "a key combination like \"Ctrl+N\"") {
            if case .failure(let problem) = Profile.combo($0) { return ", which \(problem.message)" }
            return nil
        }
        let comboGroups = Profile.comboGroups.map(\.name)
        buttons.comboGroups = strings(table, "combo-groups", at: path, what: "a combo group like \"browser\"") { name in
            comboGroups.contains(name)
                ? nil : "; the combo groups are \(comboGroups.map { Text.quoted($0) }.joined(separator: " and "))"
        }
        buttons.extraLockedKeys = strings(
            table, "extra-locked-keys", at: path, what: "an evdev key name like \"KEY_F11\""
        ) {
            EventCodes.isKeyName($0) ? nil : ", which is not an evdev key name (like \"KEY_F11\" or \"BTN_LEFT\")"
        }
        return buttons
    }

    /// The strings of the array `key` of `table`, each once, in order. An element that is not a
    /// string (`what` says what it should be), or of which `problem` says what is wrong (the rest
    /// of the sentence after "PATH is "VALUE""), is an error at its place and left out.
    mutating func strings(
        _ table: TOMLTable, _ key: String, at path: TOMLPath, what: String, problem: (String) -> String?
    ) -> [String] {
        let arrayPath = path + [.key(key)]
        guard let value = table[key], let array = array(value, at: arrayPath) else { return [] }
        var found: [String] = []
        for (index, element) in array.enumerated() {
            let elementPath = arrayPath + [.index(index)]
            guard let text = string(element, at: elementPath, what: what) else { continue }
            if let problem = problem(text) {
                error(
                    "\(ProfileReader.name(elementPath)) is \(Text.quoted(text))\(problem)", at: elementPath, value: true
                )
                continue
            }
            if !found.contains(text) { found.append(text) }
        }
        return found
    }

    mutating func accessibility(
        _ table: TOMLTable, at path: TOMLPath, buttons: Profile.Buttons
    ) -> Profile.Accessibility {
        var accessibility = Profile.Accessibility()
        checkKeys(
            table, at: path,
            allowed: ["allowed-keys", "allowed-combos", "sticky-keys", "slow-keys", "bounce-keys", "screen-reader"])
        accessibility.allowedKeys = strings(
            table, "allowed-keys", at: path, what: "an evdev key name like \"KEY_SPACE\""
        ) {
            guard EventCodes.isKeyName($0), $0.hasPrefix("KEY_") else {
                return
                    ", which is not an evdev keyboard key name (like \"KEY_SPACE\"; pointer buttons follow [pointer])"
            }
            if buttons.extraLockedKeys.contains($0) {
                return ", which buttons.extra-locked-keys also names; a key is either locked or allowed"
            }
            return nil
        }
        let allowedAlt = Set(buttons.allowedChords.compactMap { Profile.Buttons.allowedAltChordCodes[$0] })
        accessibility.allowedCombos = strings(
            table, "allowed-combos", at: path, what: "a key combination like \"Super+Alt+S\""
        ) {
            switch Profile.combo($0) {
            case .failure(let problem): return ", which \(problem.message)"
            case .success(let combo):
                if buttons.escapeChords == .blocked && combo.isEscapeChord(allowedAltChords: allowedAlt) {
                    return ", an escape chord: buttons.escape-chords = \"blocked\" keeps every escape chord blocked"
                }
                return nil
            }
        }
        let stickyPath = path + [.key("sticky-keys")]
        if let value = table["sticky-keys"], expect(value, .bool, at: stickyPath), let on = value.bool {
            accessibility.stickyKeys = on
        }
        accessibility.slowKeys = accessDelay(table, "slow-keys", at: path)
        accessibility.bounceKeys = accessDelay(table, "bounce-keys", at: path)
        let readerPath = path + [.key("screen-reader")]
        if let value = table["screen-reader"], expect(value, .string, at: readerPath), let name = value.string {
            if let reader = Profile.Accessibility.ScreenReader(rawValue: name) {
                accessibility.screenReader = reader
            } else {
                let known = Profile.Accessibility.ScreenReader.allCases.map { "\"\($0.rawValue)\"" }
                error(
                    "\(ProfileReader.name(readerPath)) is \"\(name)\"; kioskd knows the keys of \(known.joined(separator: ", "))",
                    at: readerPath, value: true)
            }
        }
        return accessibility
    }

    /// `slow-keys` or `bounce-keys`: a duration within ``Profile/Accessibility/accessDelays``.
    private mutating func accessDelay(_ table: TOMLTable, _ key: String, at path: TOMLPath) -> Duration? {
        let keyPath = path + [.key(key)]
        guard let value = table[key], let delay = duration(value, at: keyPath) else { return nil }
        let range = Profile.Accessibility.accessDelays
        guard range.contains(delay) else {
            error(
                "\(ProfileReader.name(keyPath)) is \(delay.kioskText), outside \(range.lowerBound.kioskText)…\(range.upperBound.kioskText)",
                at: keyPath, value: true)
            return nil
        }
        return delay
    }

    /// The most `[[device]]` entries a profile may have.
    static let maximumDevices = 32

    mutating func devices(_ array: TOMLArray, at path: TOMLPath) -> [Profile.Device] {
        var devices: [Profile.Device] = []
        for (index, element) in array.enumerated() {
            let entryPath = path + [.index(index)]
            if let table = self.table(element, at: entryPath), let device = device(table, at: entryPath) {
                devices.append(device)
            }
        }
        if array.count > Self.maximumDevices {
            error("device has \(array.count) entries; at most \(Self.maximumDevices) are allowed", at: path)
        }
        return devices
    }

    mutating func device(_ table: TOMLTable, at path: TOMLPath) -> Profile.Device? {
        checkKeys(table, at: path, allowed: ["role", "name", "vendor", "product", "udev", "passes", "hide-pointer"])
        let line = map.position(of: path).line
        var problem = false
        var role: String?
        if let value = table["role"],
            let text = string(value, at: path + [.key("role")], what: "a word like \"accessibility\"")
        {
            let valid =
                !text.isEmpty && text.utf8.count <= 32
                && text.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
            if valid {
                role = text
            } else {
                error(
                    "\(ProfileReader.name(path + [.key("role")])) is \(Text.quoted(text)); a role is a lower-case word of up to 32 letters, digits and '-', like \"accessibility\", \"scanner\", \"keypad\" or \"card-reader\"",
                    at: path + [.key("role")], value: true)
                problem = true
            }
        } else if table["role"] == nil {
            error(
                "\(ProfileReader.name(path)) has no role; say why it is allowed, like role = \"accessibility\"",
                at: path)
            problem = true
        } else {
            problem = true
        }
        var hidePointer = false
        if let value = table["hide-pointer"] {
            if expect(value, .bool, at: path + [.key("hide-pointer")]), let hide = value.bool {
                hidePointer = hide
            } else {
                problem = true
            }
        }
        var passes: Profile.Device.Passes?
        if let value = table["passes"] {
            passes = choice(value, at: path + [.key("passes")], [Profile.Device.Passes.all, .keys, .pointer])
            if passes == nil { problem = true }
            if hidePointer, let passes, passes != .keys {
                error(
                    "\(ProfileReader.name(path)) has hide-pointer = true and passes = \(Text.quoted(passes.rawValue)): its pointer cannot both pass and be hidden; use passes = \"keys\" or no passes",
                    at: path + [.key("hide-pointer")])
                problem = true
            }
        } else if hidePointer {
            passes = .nothing
        } else {
            error(
                "\(ProfileReader.name(path)) has no passes; say what of the device passes the locks: \"keys\", \"pointer\" or \"all\" (or hide its pointer with hide-pointer = true)",
                at: path)
            problem = true
        }
        var name: String?
        if let value = table["name"], let text = string(value, at: path + [.key("name")]) {
            if text.isEmpty || text.utf8.count > 255 {
                error(
                    "\(ProfileReader.name(path + [.key("name")])) must be a device name of 1 to 255 bytes",
                    at: path + [.key("name")], value: true)
                problem = true
            } else {
                name = text
            }
        }
        var ids: [String: Int] = [:]
        for key in ["vendor", "product"] {
            guard let value = table[key] else { continue }
            let idPath = path + [.key(key)]
            guard expect(value, .int, at: idPath, what: "an integer like 0x1234"), let int = value.int else {
                problem = true
                continue
            }
            guard (0...0xFFFF).contains(int) else {
                error("\(ProfileReader.name(idPath)) is \(int), outside 0x0000…0xffff", at: idPath, value: true)
                problem = true
                continue
            }
            ids[key] = int
        }
        if ids["product"] != nil && ids["vendor"] == nil {
            error(
                "\(ProfileReader.name(path)) has a product but no vendor; product ids are per vendor",
                at: path + [.key("product")])
            problem = true
        }
        var udev: [String: String] = [:]
        if let value = table["udev"], let properties = self.table(value, at: path + [.key("udev")]) {
            for key in properties.keys {
                let propertyPath = path + [.key("udev"), .key(key)]
                guard let text = string(properties[key]!, at: propertyPath) else { problem = true; continue }
                let validKey =
                    !key.isEmpty
                    && key.unicodeScalars.allSatisfy {
                        ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_"
                    }
                if !validKey {
                    error(
                        "\(ProfileReader.name(propertyPath)): \(Text.quoted(key)) is not a udev property name (upper-case letters, digits and _)",
                        at: propertyPath)
                    problem = true
                } else {
                    udev[key] = text
                }
            }
        }
        let identifying = name != nil || ids["vendor"] != nil || udev.keys.contains { !Self.isGenericClassProperty($0) }
        if !identifying {
            let generic = udev.keys.sorted().filter(Self.isGenericClassProperty)
            let why =
                generic.isEmpty
                ? "has nothing to match a device by"
                : "matches only on \(generic.joined(separator: ", ")), which every device of its class has"
            error(
                "\(ProfileReader.name(path)) \(why); match one device by name, vendor and product, or a udev property such as ID_PATH or ID_SERIAL",
                at: path)
            problem = true
        }
        guard !problem, let role, let passes else { return nil }
        return Profile.Device(
            role: role, name: name, vendor: ids["vendor"], product: ids["product"], udev: udev, passes: passes,
            hidePointer: hidePointer, line: line)
    }

    /// udev's device-class properties (`ID_INPUT`, `ID_INPUT_KEYBOARD`, `ID_INPUT_MOUSE`, …):
    /// every keyboard has `ID_INPUT_KEYBOARD`, so matching on it alone would unlock them all.
    static func isGenericClassProperty(_ key: String) -> Bool {
        key == "ID_INPUT" || key.hasPrefix("ID_INPUT_") || key == "SUBSYSTEM" || key == "ID_BUS" || key == "ID_TYPE"
    }

    mutating func touch(_ table: TOMLTable, at path: TOMLPath) -> Profile.Touch {
        var touch = Profile.Touch()
        checkKeys(table, at: path, allowed: ["mode", "locked-region", "max-contacts", "edge-margin", "show-locked", "shade-opacity"])
        let maxPath = path + [.key("max-contacts")]
        if let value = table["max-contacts"], expect(value, .int, at: maxPath), let count = value.int {
            let range = Profile.Touch.maxContactsRange
            if range.contains(count) {
                touch.maxContacts = count
            } else {
                error(
                    "touch.max-contacts is \(count); give \(range.lowerBound) to \(range.upperBound) (fingers at once)",
                    at: maxPath, value: true)
            }
        }
        let marginPath = path + [.key("edge-margin")]
        if let value = table["edge-margin"],
            let margin = number(value, at: marginPath, in: Profile.Touch.edgeMarginRange), margin > 0
        {
            touch.edgeMargin = margin
        }
        let showPath = path + [.key("show-locked")]
        if let value = table["show-locked"], expect(value, .bool, at: showPath), let show = value.bool {
            touch.showLocked = show
        }
        let shadePath = path + [.key("shade-opacity")]
        if let value = table["shade-opacity"],
            let opacity = number(value, at: shadePath, in: Profile.Touch.shadeOpacityRange)
        {
            touch.shadeOpacity = opacity
        }
        let modePath = path + [.key("mode")]
        if let value = table["mode"], let mode = choice(value, at: modePath, [Profile.TouchMode.all, .none, .regions]) {
            touch.mode = mode
        }
        let regionsPath = path + [.key("locked-region")]
        if let value = table["locked-region"], let array = array(value, at: regionsPath) {
            for (index, element) in array.enumerated() {
                let regionPath = regionsPath + [.index(index)]
                if let regionTable = self.table(element, at: regionPath),
                    let region = region(regionTable, at: regionPath, index: index)
                {
                    touch.lockedRegions.append(region)
                }
            }
            if array.count > 64 {
                error(
                    "\(ProfileReader.name(regionsPath)) has \(array.count) regions; at most 64 are allowed",
                    at: regionsPath)
            }
            if touch.mode != .regions && !array.isEmpty {
                error(
                    "touch.locked-region is set but touch.mode is \"\(touch.mode.rawValue)\"; set mode = \"regions\" for the regions to apply",
                    at: modePath, value: table["mode"] != nil)
            }
        }
        if touch.mode == .regions && table["locked-region"] == nil {
            error("touch.mode is \"regions\" but no [[touch.locked-region]] is given", at: modePath, value: true)
        }
        return touch
    }

    mutating func region(_ table: TOMLTable, at path: TOMLPath, index: Int) -> Profile.Region? {
        checkKeys(table, at: path, allowed: ["name", "rect", "polygon"])
        var name = "region \(index + 1)"
        if let value = table["name"], let text = string(value, at: path + [.key("name")]) {
            do {
                try Text.validate(text, what: "region name", maxBytes: KioskWire.Limits.titleBytes, multiline: false)
                name = text
            } catch { self.error(error.message, at: path + [.key("name")], value: true) }
        }
        switch (table["rect"], table["polygon"]) {
        case (let rect?, nil):
            guard let shape = self.rect(rect, at: path + [.key("rect")]) else { return nil }
            return Profile.Region(name: name, shape: shape)
        case (nil, let polygon?):
            guard let shape = self.polygon(polygon, at: path + [.key("polygon")]) else { return nil }
            return Profile.Region(name: name, shape: shape)
        case (.some, .some):
            error(
                "\(ProfileReader.name(path)) has both rect and polygon; give one shape per region",
                at: path + [.key("polygon")])
            return nil
        case (nil, nil):
            error(
                "\(ProfileReader.name(path)) has no shape; give rect = { x, y, width, height } or polygon = [[x, y], …]",
                at: path)
            return nil
        }
    }

    mutating func rect(_ value: any TOMLValueConvertible, at path: TOMLPath) -> Profile.Shape? {
        guard let table = table(value, at: path) else { return nil }
        checkKeys(table, at: path, allowed: ["x", "y", "width", "height"])
        var parts: [Double] = []
        for key in ["x", "y", "width", "height"] {
            guard let v = table[key] else {
                error("\(ProfileReader.name(path)) is missing \(key); a rect needs x, y, width and height", at: path)
                return nil
            }
            guard let number = number(v, at: path + [.key(key)], in: 0...1) else { return nil }
            parts.append(number)
        }
        let (x, y, width, height) = (parts[0], parts[1], parts[2], parts[3])
        if width == 0 || height == 0 {
            error("\(ProfileReader.name(path)) has no area (width and height must be above 0)", at: path, value: true)
            return nil
        }
        if x + width > 1 + 1e-9 {
            error(
                "\(ProfileReader.name(path)) reaches x = \(x + width), past the right edge (x + width must be ≤ 1)",
                at: path + [.key("width")], value: true)
            return nil
        }
        if y + height > 1 + 1e-9 {
            error(
                "\(ProfileReader.name(path)) reaches y = \(y + height), past the bottom edge (y + height must be ≤ 1)",
                at: path + [.key("height")], value: true)
            return nil
        }
        return .rect(x: x, y: y, width: width, height: height)
    }

    mutating func polygon(_ value: any TOMLValueConvertible, at path: TOMLPath) -> Profile.Shape? {
        guard let array = array(value, at: path) else { return nil }
        var points: [Profile.Point] = []
        for (index, element) in array.enumerated() {
            let pointPath = path + [.index(index)]
            guard let pair = self.array(element, at: pointPath) else { return nil }
            guard pair.count == 2 else {
                error(
                    "\(ProfileReader.name(pointPath)) has \(pair.count) numbers; a point is [x, y]", at: pointPath,
                    value: true
                )
                return nil
            }
            guard let x = number(pair[0], at: pointPath + [.index(0)], in: 0...1),
                let y = number(pair[1], at: pointPath + [.index(1)], in: 0...1)
            else { return nil }
            points.append(Profile.Point(x: x, y: y))
        }
        guard points.count >= 3 else {
            error(
                "\(ProfileReader.name(path)) has \(points.count) points; a polygon needs at least 3", at: path,
                value: true)
            return nil
        }
        guard points.count <= 64 else {
            error(
                "\(ProfileReader.name(path)) has \(points.count) points; at most 64 are allowed", at: path, value: true)
            return nil
        }
        if let problem = Polygon.simplicityProblem(points) {
            error("\(ProfileReader.name(path)) is not a simple polygon: \(problem)", at: path, value: true)
            return nil
        }
        return .polygon(points)
    }

    /// `[browser]`: only for a built-in browser's profile; each of `allowed-urls` a Chromium URL
    /// pattern, and one Firefox can match when the profile's app is Firefox.
    mutating func browser(_ table: TOMLTable, at path: TOMLPath, app: AppID?) -> Profile.BrowserSettings {
        var settings = Profile.BrowserSettings()
        guard let app, let browser = Browser(app: app) else {
            error(
                "[browser] is for a profile whose app is a browser kioskd governs (\(Browser.allCases.map(\.app.rawValue).joined(separator: " or "))), not \(app.map { "\($0)" } ?? "a profile with no app")",
                at: path)
            return settings
        }
        checkKeys(table, at: path, allowed: ["allowed-urls"])
        let listPath = path + [.key("allowed-urls")]
        guard let value = table["allowed-urls"], let list = array(value, at: listPath) else { return settings }
        if list.count > Profile.BrowserSettings.maxAllowedURLs {
            error(
                "browser.allowed-urls lists \(list.count) patterns, more than the \(Profile.BrowserSettings.maxAllowedURLs) kioskd gives a browser (Chromium reads 1000 in a list, and kioskd may add the bridge's)",
                at: listPath, value: true)
        }
        for index in 0..<list.count {
            let itemPath = listPath + [.index(index)]
            guard let text = string(list[index], at: itemPath) else { continue }
            do {
                let pattern = try BrowserURLPattern(text)
                if browser == .firefox { _ = try pattern.firefoxPattern() }
                if settings.allowedURLs.contains(pattern) {
                    error("browser.allowed-urls lists \(pattern) twice", at: itemPath, value: true)
                } else {
                    settings.allowedURLs.append(pattern)
                }
            } catch {
                self.error("browser.allowed-urls: \(error.message)", at: itemPath, value: true)
            }
        }
        return settings
    }

    /// A browser profile that lists allowed URLs denies its browser's `navigation` during the
    /// session unless `[restrictions]` says otherwise; saying `allow` there is refused, since the
    /// list would then hold nothing back (docs/profiles.md § [browser]).
    mutating func presetNavigation(_ profile: inout Profile) {
        guard !profile.browser.allowedURLs.isEmpty, let app = profile.app, let browser = Browser(app: app) else {
            return
        }
        let navigation = browser.restriction(.navigation)
        if let preset = profile.presets.first(where: { $0.app == app && $0.restriction == navigation }) {
            if preset.state == .allow {
                error(
                    "\(navigation) = \"allow\" lets the visitor open any page, so browser.allowed-urls would hold nothing back: deny it (or leave it out, which denies it), or remove allowed-urls",
                    at: [.key("restrictions"), .key(app.rawValue), .key(navigation.rawValue)], value: true)
            }
            return
        }
        profile.presets.append(Profile.Preset(app: app, restriction: navigation, state: .deny))
    }

    mutating func presets(_ table: TOMLTable, at path: TOMLPath) -> [Profile.Preset] {
        var presets: [Profile.Preset] = []
        // Keep the file's order: TOMLKit's tables are sorted by key.
        let appKeys = table.keys.sorted { map.position(of: path + [.key($0)]) < map.position(of: path + [.key($1)]) }
        for appKey in appKeys {
            let appPath = path + [.key(appKey)]
            let app: AppID
            do { app = try AppID(appKey) } catch {
                self.error("restrictions: \(error.message)", at: appPath)
                continue
            }
            guard let value = table[appKey], let states = self.table(value, at: appPath) else { continue }
            let ids = states.keys.sorted {
                map.position(of: appPath + [.key($0)]) < map.position(of: appPath + [.key($1)])
            }
            for idKey in ids {
                let idPath = appPath + [.key(idKey)]
                let id: RestrictionID
                do { id = try RestrictionID(idKey) } catch {
                    self.error("restrictions: \(error.message)", at: idPath)
                    continue
                }
                guard let stateValue = states[idKey],
                    let state = choice(stateValue, at: idPath, [RestrictionState.allow, .deny])
                else { continue }
                presets.append(Profile.Preset(app: app, restriction: id, state: state))
            }
        }
        return presets
    }

    /// `visitor-extensions`, `extend-by` and `warn-before` (docs/profiles.md § Time the visitor can
    /// extend): each refused at its line when out of range or without what it needs.
    mutating func visitorExtensions(_ table: TOMLTable, at path: TOMLPath, into session: inout Profile.Session) {
        let countPath = path + [.key("visitor-extensions")]
        let hasCount = table["visitor-extensions"] != nil
        if let value = table["visitor-extensions"], expect(value, .int, at: countPath), let count = value.int {
            let range = Profile.Session.visitorExtensionRange
            if table["time-limit"] == nil {
                error("session.visitor-extensions needs a session.time-limit to extend", at: countPath)
            } else if !range.contains(count) {
                error(
                    "session.visitor-extensions is \(count); give \(range.lowerBound) to \(range.upperBound) (a visitor must be able to extend at least \(range.lowerBound) times)",
                    at: countPath, value: true)
            } else {
                session.visitorExtensions = count
            }
        }
        let extendPath = path + [.key("extend-by")]
        if let value = table["extend-by"], let amount = duration(value, at: extendPath) {
            if !hasCount {
                error("session.extend-by is only for session.visitor-extensions", at: extendPath)
            } else if amount <= .zero || amount > Profile.Session.maximumExtendBy {
                error(
                    "session.extend-by is \(amount.kioskText); give more than 0s and at most \(Profile.Session.maximumExtendBy.kioskText)",
                    at: extendPath, value: true)
            } else {
                session.extendBy = amount
            }
        }
        let warnPath = path + [.key("warn-before")]
        if let value = table["warn-before"], let before = duration(value, at: warnPath) {
            if !hasCount {
                error("session.warn-before is only for session.visitor-extensions", at: warnPath)
            } else if before < Profile.Session.minimumWarnBefore {
                error(
                    "session.warn-before is \(before.kioskText); a visitor needs at least \(Profile.Session.minimumWarnBefore.kioskText) to ask for more time",
                    at: warnPath, value: true)
            } else if let limit = session.timeLimit, before >= limit {
                error(
                    "session.warn-before is \(before.kioskText), not less than the time limit \(limit.kioskText)",
                    at: warnPath, value: true)
            } else {
                session.warnBefore = before
            }
        }
        // The default offer (30 s before the end) must fit the time limit too.
        if table["warn-before"] == nil, session.visitorExtensions != nil, let limit = session.timeLimit,
            session.warnBefore >= limit
        {
            error(
                "session.time-limit \(limit.kioskText) is not longer than the default session.warn-before \(session.warnBefore.kioskText); set a shorter warn-before (at least \(Profile.Session.minimumWarnBefore.kioskText)) or a longer time limit",
                at: countPath)
        }
    }

    mutating func session(_ table: TOMLTable, at path: TOMLPath) -> Profile.Session {
        var session = Profile.Session()
        checkKeys(
            table, at: path,
            allowed: [
                "time-limit", "warnings", "exit-gesture", "speak-warnings", "keep-awake", "app-may-request",
                "visitor-extensions", "extend-by", "warn-before", "language", "cleaning-gesture", "cleaning-time",
            ])
        let languagePath = path + [.key("language")]
        if let value = table["language"], expect(value, .string, at: languagePath), let language = value.string {
            if KioskWire.isLanguage(language) {
                session.language = language
            } else {
                error(
                    "session.language \"\(language)\" is not a language: give a language code as gettext takes it (\"de\", \"pt_BR\", \"sr@latin\")",
                    at: languagePath, value: true)
            }
        }
        if let value = table["speak-warnings"], expect(value, .bool, at: path + [.key("speak-warnings")]),
            let speak = value.bool
        {
            session.speakWarnings = speak
        }
        if let value = table["keep-awake"], expect(value, .bool, at: path + [.key("keep-awake")]),
            let awake = value.bool
        {
            session.keepAwake = awake
        }
        if let value = table["app-may-request"], expect(value, .bool, at: path + [.key("app-may-request")]),
            let may = value.bool
        {
            session.appMayRequest = may
        }
        let limitPath = path + [.key("time-limit")]
        if let value = table["time-limit"], let limit = duration(value, at: limitPath) {
            if limit > Profile.Session.maximumTimeLimit {
                error(
                    "session.time-limit is \(limit.kioskText); at most \(Profile.Session.maximumTimeLimit.kioskText) is allowed",
                    at: limitPath, value: true)
            } else {
                session.timeLimit = limit
            }
        }
        let warningsPath = path + [.key("warnings")]
        if let value = table["warnings"], let array = array(value, at: warningsPath) {
            if table["time-limit"] == nil {
                error("session.warnings needs a session.time-limit to count down from", at: warningsPath)
            }
            for (index, element) in array.enumerated() {
                let warningPath = warningsPath + [.index(index)]
                guard let warning = duration(element, at: warningPath) else { continue }
                if let limit = session.timeLimit, warning >= limit {
                    error(
                        "\(ProfileReader.name(warningPath)) is \(warning.kioskText), not less than the time limit \(limit.kioskText)",
                        at: warningPath, value: true)
                } else if session.warnings.contains(warning) {
                    error(
                        "\(ProfileReader.name(warningPath)) repeats \(warning.kioskText)", at: warningPath, value: true)
                } else {
                    session.warnings.append(warning)
                }
            }
            session.warnings.sort(by: >)
        }
        visitorExtensions(table, at: path, into: &session)
        (session.exitGesture, session.touchExitGesture) = gestures(table, "exit-gesture", at: path)
        cleaning(table, at: path, into: &session)
        return session
    }

    /// `[session]`'s `key` gesture: one (a table: a key's presses or a corner's taps), or both (an
    /// array of the two), parsed the same way for the exit gesture and the cleaning gesture.
    mutating func gestures(
        _ table: TOMLTable, _ key: String, at path: TOMLPath
    ) -> (Profile.ExitGesture?, Profile.TouchExitGesture?) {
        let name = "session.\(key)"
        let gesturePath = path + [.key(key)]
        var keyGesture: Profile.ExitGesture?
        var touchGesture: Profile.TouchExitGesture?
        guard let value = table[key] else { return (nil, nil) }
        var gestures: [(TOMLTable, TOMLPath)] = []
        if value.type == .array, let array = value.array {
            for (index, element) in array.enumerated() {
                if let gesture = self.table(element, at: gesturePath + [.index(index)]) {
                    gestures.append((gesture, gesturePath + [.index(index)]))
                }
            }
            if array.count > 2 {
                error(
                    "\(name) has \(array.count) gestures; give at most one key gesture and one touch gesture",
                    at: gesturePath, value: true)
            }
        } else if let gesture = self.table(
            value, at: gesturePath,
            what:
                "a table like { key = \"KEY_POWER\", presses = 3, within = \"1.5s\" } or { corner = \"top-left\", taps = 5, within = \"3s\" }, or an array of both"
        ) {
            gestures.append((gesture, gesturePath))
        }
        for (gesture, gesturePath) in gestures {
            if gesture["corner"] != nil || gesture["taps"] != nil {
                if touchGesture != nil {
                    error("\(name) has two touch gestures; give at most one", at: gesturePath)
                }
                touchGesture = touchExitGesture(gesture, at: gesturePath, name: name)
            } else {
                if keyGesture != nil {
                    error("\(name) has two key gestures; give at most one", at: gesturePath)
                }
                keyGesture = exitGesture(gesture, at: gesturePath, name: name)
            }
        }
        return (keyGesture, touchGesture)
    }

    /// `cleaning-gesture` and `cleaning-time` (docs/profiles.md § Cleaning the screen): a gesture
    /// the exit gesture is not (the same key pressed as often, or the same corner tapped as
    /// often, would make both at once).
    mutating func cleaning(_ table: TOMLTable, at path: TOMLPath, into session: inout Profile.Session) {
        let gesturePath = path + [.key("cleaning-gesture")]
        let (key, touch) = gestures(table, "cleaning-gesture", at: path)
        if let key, let exit = session.exitGesture, key.key == exit.key, key.presses == exit.presses {
            error(
                "session.cleaning-gesture is \(key.presses) presses of \(key.key), as session.exit-gesture is; give a gesture of its own (another key, or another number of presses)",
                at: gesturePath)
        } else {
            session.cleaningGesture = key
        }
        if let touch, let exit = session.touchExitGesture, touch.corner == exit.corner, touch.taps == exit.taps {
            error(
                "session.cleaning-gesture is \(touch.taps) taps in the \(touch.corner.rawValue) corner, as session.exit-gesture is; give a gesture of its own (another corner, or another number of taps)",
                at: gesturePath)
        } else {
            session.touchCleaningGesture = touch
        }
        let timePath = path + [.key("cleaning-time")]
        guard let value = table["cleaning-time"], let time = duration(value, at: timePath) else { return }
        let range = Profile.Session.cleaningTimeRange
        guard range.contains(time) else {
            error(
                "session.cleaning-time is \(time.kioskText), outside \(range.lowerBound.kioskText)…\(range.upperBound.kioskText)",
                at: timePath, value: true)
            return
        }
        if table["cleaning-gesture"] == nil {
            error("session.cleaning-time needs a session.cleaning-gesture to start the cleaning", at: timePath)
        }
        session.cleaningTime = time
    }

    mutating func touchExitGesture(
        _ table: TOMLTable, at path: TOMLPath, name: String = "session.exit-gesture"
    ) -> Profile.TouchExitGesture? {
        checkKeys(table, at: path, allowed: ["corner", "taps", "within"])
        guard let cornerValue = table["corner"], let tapsValue = table["taps"], let withinValue = table["within"] else {
            error(
                "\(name == "session.exit-gesture" ? "a touch exit gesture" : "\(name)'s touch gesture") needs corner, taps and within, like { corner = \"top-left\", taps = 5, within = \"3s\" }",
                at: path)
            return nil
        }
        let corners = KioskInput.TouchExitGesture.Corner.allCases
        guard let corner = choice(cornerValue, at: path + [.key("corner")], corners) else { return nil }
        let tapsPath = path + [.key("taps")]
        guard expect(tapsValue, .int, at: tapsPath), let taps = tapsValue.int else { return nil }
        guard (2...10).contains(taps) else {
            error("\(ProfileReader.name(tapsPath)) is \(taps), outside 2…10", at: tapsPath, value: true)
            return nil
        }
        let withinPath = path + [.key("within")]
        guard let within = duration(withinValue, at: withinPath) else { return nil }
        guard within >= .milliseconds(500) && within <= .seconds(10) else {
            error(
                "\(ProfileReader.name(withinPath)) is \(within.kioskText), outside 500ms…10s", at: withinPath,
                value: true)
            return nil
        }
        return Profile.TouchExitGesture(corner: corner, taps: taps, within: within)
    }

    mutating func exitGesture(
        _ table: TOMLTable, at path: TOMLPath, name: String = "session.exit-gesture"
    ) -> Profile.ExitGesture? {
        checkKeys(table, at: path, allowed: ["key", "presses", "within"])
        guard let keyValue = table["key"], let pressesValue = table["presses"], let withinValue = table["within"] else {
            error(
                "\(name) needs key, presses and within, like { key = \"KEY_POWER\", presses = 3, within = \"1.5s\" }",
                at: path)
            return nil
        }
        let keyPath = path + [.key("key")]
        guard let key = string(keyValue, at: keyPath, what: "an evdev key name like \"KEY_POWER\"") else { return nil }
        guard EventCodes.isKeyName(key) else {
            error(
                "\(name).key is \(Text.quoted(key)), which is not an evdev key name (like \"KEY_POWER\")",
                at: keyPath, value: true)
            return nil
        }
        let pressesPath = path + [.key("presses")]
        guard expect(pressesValue, .int, at: pressesPath), let presses = pressesValue.int else { return nil }
        guard (1...10).contains(presses) else {
            error("\(name).presses is \(presses), outside 1…10", at: pressesPath, value: true)
            return nil
        }
        let withinPath = path + [.key("within")]
        guard let within = duration(withinValue, at: withinPath) else { return nil }
        guard within >= .milliseconds(100) && within <= .seconds(10) else {
            error("\(name).within is \(within.kioskText), outside 100ms…10s", at: withinPath, value: true)
            return nil
        }
        return Profile.ExitGesture(key: key, presses: presses, within: within)
    }

    mutating func passcode(_ table: TOMLTable, at path: TOMLPath) -> String? {
        checkKeys(table, at: path, allowed: ["hash"])
        let hashPath = path + [.key("hash")]
        guard let value = table["hash"], let hash = string(value, at: hashPath) else { return nil }
        if let problem = PasscodeHash.problem(with: hash) {
            error("passcode.hash \(problem)", at: hashPath, value: true)
            return nil
        }
        return hash
    }
}
