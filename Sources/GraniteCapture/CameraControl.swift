/// One control of a V4L2 device (exposure, focus, white balance, brightness…), as
/// `granite devices` lists it and `granite-cam --ctrl` sets it.
public struct CameraControl: Sendable, Hashable, CustomStringConvertible {
    /// What kind of value a control holds (V4L2's `v4l2_ctrl_type`, by v4l2-ctl's short names).
    public enum Kind: String, Sendable, Hashable {
        case integer = "int", boolean = "bool", menu, button, integer64 = "int64", string = "str"
        case bitmask, integerMenu = "intmenu", other = "?"

        init(v4l2 type: UInt32) {
            switch type {
            case 1: self = .integer
            case 2: self = .boolean
            case 3: self = .menu
            case 4: self = .button
            case 5: self = .integer64
            case 7: self = .string
            case 8: self = .bitmask
            case 9: self = .integerMenu
            default: self = .other
            }
        }
    }

    /// One entry of a menu control: its index, and its name (or number, for an integer menu).
    public struct MenuItem: Sendable, Hashable {
        /// The value that selects it.
        public var index: Int64
        /// The driver's text (`Aperture Priority Mode`), or the number of an integer menu.
        public var name: String

        /// A menu item.
        public init(index: Int64, name: String) {
            self.index = index
            self.name = name
        }
    }

    /// The V4L2 control id.
    public var id: UInt32
    /// The name as v4l2-ctl spells it (`exposure_time_absolute`): what `--ctrl` takes.
    public var name: String
    /// The driver's own label (`Exposure Time, Absolute`).
    public var label: String
    /// The value kind.
    public var kind: Kind
    /// Range and step (for a string: its length range).
    public var minimum: Int64
    /// The largest value.
    public var maximum: Int64
    /// The step between valid values.
    public var step: Int64
    /// The driver's default.
    public var defaultValue: Int64
    /// The value now (nil when it cannot be read: write-only, a button, a string).
    public var value: Int64?
    /// The text now, for a string control.
    public var text: String?
    /// V4L2_CTRL_FLAG_* bits.
    public var flags: UInt32
    /// Menu items (menus and integer menus only).
    public var menu: [MenuItem]

    /// A control entry.
    public init(id: UInt32, label: String, kind: Kind, minimum: Int64, maximum: Int64, step: Int64,
                defaultValue: Int64, flags: UInt32, value: Int64? = nil, text: String? = nil, menu: [MenuItem] = []) {
        self.id = id
        self.name = CameraControl.variableName(label)
        self.label = label
        self.kind = kind
        self.minimum = minimum
        self.maximum = maximum
        self.step = step
        self.defaultValue = defaultValue
        self.flags = flags
        self.value = value
        self.text = text
        self.menu = menu
    }

    /// The flags by v4l2-ctl's words (`read-only`, `inactive`, …).
    public var flagNames: [String] {
        let names: [(UInt32, String)] = [(0x1, "disabled"), (0x2, "grabbed"), (0x4, "read-only"), (0x8, "update"),
                                         (0x10, "inactive"), (0x20, "slider"), (0x40, "write-only"), (0x80, "volatile")]
        return names.filter { flags & $0.0 != 0 }.map(\.1)
    }

    /// Whether `--ctrl` may set it.
    public var isWritable: Bool { flags & 0x5 == 0 }

    /// The valid values, as an error states them.
    public var validValues: String {
        switch kind {
        case .boolean: return "0 or 1"
        case .button: return "any value (it is a button)"
        case .menu, .integerMenu: return menu.map { "\($0.index) (\($0.name))" }.joined(separator: ", ")
        case .string: return "text of \(minimum)-\(maximum) characters"
        default: return "\(minimum)...\(maximum)" + (step > 1 ? " in steps of \(step)" : "")
        }
    }

    /// The value as read back after setting it (`brightness=200`, `menu=3 (Menu Item 3)`,
    /// `string='text'`); `name` alone for a button or a write-only control.
    public var readBack: String {
        if let text { return "\(name)='\(text)'" }
        guard let value else { return name }
        if let item = menu.first(where: { $0.index == value }) { return "\(name)=\(value) (\(item.name))" }
        return "\(name)=\(value)"
    }

    /// One line in the manner of `v4l2-ctl -L`: name, id, kind, range, default, value, flags.
    public var description: String {
        let id = "0x" + String(repeating: "0", count: max(0, 8 - String(self.id, radix: 16).count)) + String(self.id, radix: 16)
        var line = "\(name) \(id) (\(kind.rawValue)):"
        switch kind {
        case .integer, .integer64, .bitmask:
            line += " min=\(minimum) max=\(maximum) step=\(step) default=\(defaultValue)"
        case .menu, .integerMenu:
            line += " min=\(minimum) max=\(maximum) default=\(defaultValue)"
        case .boolean:
            line += " default=\(defaultValue)"
        case .string:
            line += " min=\(minimum) max=\(maximum) step=\(step)"
        case .button, .other:
            break
        }
        if let value {
            line += " value=\(value)"
            if let item = menu.first(where: { $0.index == value }) { line += " (\(item.name))" }
        }
        if let text { line += " value='\(text)'" }
        if !flagNames.isEmpty { line += " flags=\(flagNames.joined(separator: ","))" }
        return line
    }

    /// The driver's label as v4l2-ctl names it: letters and digits lower-cased, every run of
    /// anything else one underscore, none leading or trailing (`White Balance, Auto` →
    /// `white_balance_auto`).
    public static func variableName(_ label: String) -> String {
        var out = ""
        var gap = false
        for scalar in label.unicodeScalars {
            if scalar.isASCII, scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) {
                if gap && !out.isEmpty { out += "_" }
                gap = false
                out.unicodeScalars.append(scalar.properties.lowercaseMapping.unicodeScalars.first ?? scalar)
            } else {
                gap = true
            }
        }
        return out
    }

    /// The number `text` means for this control: an integer, `true`/`false` for a boolean, or a
    /// menu item's name (as listed, or in v4l2-ctl's spelling). Checked against the range and
    /// step, and for a menu against the items that exist.
    public func parse(_ text: String, device: String) throws(CaptureError) -> Int64 {
        func bad(_ why: String) -> CaptureError {
            .controlValue(device: device, control: name, value: text, reason: why, valid: validValues)
        }
        guard isWritable else { throw bad(flags & 0x4 != 0 ? "the control is read-only" : "the control is disabled") }
        var number: Int64? = Int64(text)
        switch kind {
        case .boolean:
            if text == "true" { number = 1 } else if text == "false" { number = 0 }
            guard let n = number, n == 0 || n == 1 else { throw bad("not a boolean") }
            return n
        case .button:
            return 1
        case .menu, .integerMenu:
            if let item = menu.first(where: { $0.name == text || CameraControl.variableName($0.name) == text && !text.isEmpty }),
               kind == .menu || number == nil {
                return item.index
            }
            if kind == .integerMenu, let n = number, let item = menu.first(where: { $0.name == String(n) }) { return item.index }
            guard let n = number, menu.contains(where: { $0.index == n }) else { throw bad("no such menu item") }
            return n
        case .string:
            // Text, not a number: V4L2Device.apply sets strings itself; only the length is checked here.
            guard text.utf8.count >= minimum && text.utf8.count <= maximum else { throw bad("wrong length") }
            return Int64(text.utf8.count)
        default:
            guard let n = number else { throw bad("not an integer") }
            guard n >= minimum && n <= maximum else { throw bad("out of range") }
            if step > 1 && (n - minimum) % step != 0 { throw bad("not on a step") }
            return n
        }
    }
}

/// `--ctrl name=value`: one control to set after the format is negotiated (and after every reconnect).
public struct ControlSetting: Sendable, Hashable, CustomStringConvertible {
    /// The control's name as v4l2-ctl spells it (`exposure_time_absolute`).
    public var name: String
    /// The value as given (a number, `true`/`false`, a menu item, text for a string control).
    public var value: String

    /// A setting.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// Parses `name=value`.
    public init(parsing text: String) throws(CaptureError) {
        guard let eq = text.firstIndex(of: "="), eq != text.startIndex else {
            throw .invalidRequest("--ctrl takes name=value (names as `granite devices` lists them), not \(text)")
        }
        self.init(name: String(text[..<eq]).lowercased(), value: String(text[text.index(after: eq)...]))
    }

    public var description: String { "\(name)=\(value)" }
}
