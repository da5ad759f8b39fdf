/// Text that came from a node or service (error messages, names), made safe to print.
public enum NodeText {
    /// `text` with control characters (C0, DEL, C1: ANSI escape sequences, carriage returns,
    /// bells) written as `\u{1B}`-style escapes, and cut to `limit` characters, so a hostile
    /// node cannot drive the terminal or flood it.
    public static func escaped(_ text: String, limit: Int = 2000) -> String {
        var out = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if count >= limit { out += "…"; break }
            count += 1
            switch scalar.value {
            case 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069:   // line breaks, bidi overrides
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            case 0x20..<0x7F, 0xA0...: out.unicodeScalars.append(scalar)
            default: out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            }
        }
        return out
    }
}
