import Foundation

/// An opaque sRGB colour, as `--background` takes it.
public struct RGBColor: Sendable, Equatable, Hashable, Codable, CustomStringConvertible {
    public var red: UInt8, green: UInt8, blue: UInt8

    /// A colour from its three 8-bit components.
    public init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    /// White, the background JPEG outputs get by default (as browsers show transparency on a page).
    public static let white = RGBColor(red: 255, green: 255, blue: 255)

    /// Parses `#RRGGBB`, `RRGGBB`, `#RGB`, `R,G,B` (0-255 each), `white` or `black`.
    public init?(parsing text: String) {
        let t = text.trimmingCharacters(in: .whitespaces).lowercased()
        switch t {
        case "white": self = .white; return
        case "black": self.init(red: 0, green: 0, blue: 0); return
        default: break
        }
        let parts = t.split(separator: ",", omittingEmptySubsequences: false)
        if parts.count == 3 {
            let v = parts.compactMap { UInt8($0.trimmingCharacters(in: .whitespaces)) }
            guard v.count == 3 else { return nil }
            self.init(red: v[0], green: v[1], blue: v[2])
            return
        }
        var hex = Substring(t)
        if hex.hasPrefix("#") { hex = hex.dropFirst() }
        guard hex.allSatisfy(\.isHexDigit) else { return nil }
        if hex.count == 3 { hex = Substring(hex.flatMap { [$0, $0] }) }
        guard hex.count == 6, let value = UInt32(hex, radix: 16) else { return nil }
        self.init(red: UInt8(value >> 16), green: UInt8(value >> 8 & 0xFF), blue: UInt8(value & 0xFF))
    }

    /// `#rrggbb`.
    public var description: String {
        "#" + [red, green, blue].map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}

extension Image {
    /// Whether every pixel is fully opaque (always true for formats without alpha).
    public var isOpaque: Bool {
        guard format == .rgba8 else { return true }
        return bytes.withUnsafeBufferPointer { p in
            var i = 3
            while i < p.count {
                if p[i] != 255 { return false }
                i += 4
            }
            return true
        }
    }

    /// The image composited onto `background` (`rgba8` with alpha 255 everywhere), for outputs
    /// that cannot hold alpha: `c × a + background × (1 − a)` in the stored (sRGB-encoded) values,
    /// as libvips' `flatten` and ImageMagick's `-flatten` do. Other formats come back unchanged.
    public func flattened(onto background: RGBColor) -> Image {
        guard format == .rgba8, !isOpaque else { return self }
        var out = bytes
        let bg = [Int(background.red), Int(background.green), Int(background.blue)]
        out.withUnsafeMutableBufferPointer { p in
            var i = 0
            while i < p.count {
                let a = Int(p[i + 3])
                if a != 255 {
                    for c in 0..<3 { p[i + c] = UInt8((Int(p[i + c]) * a + bg[c] * (255 - a) + 127) / 255) }
                    p[i + 3] = 255
                }
                i += 4
            }
        }
        // Same size and format: cannot fail.
        return try! Image(width: width, height: height, format: format, bytes: out)
    }
}
